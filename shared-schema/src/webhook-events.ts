import { z } from 'zod';
import { uuid } from './common.js';
import { DISPUTE_STATUSES, INTENDED_USES, VOICE_STATUSES } from './enums.js';
import { licenseRequestSchema } from './license-requests.js';
import { licenseSchema } from './licenses.js';
import { PROVENANCE_VERDICTS } from './provenance.js';
import { deletedVoiceSchema } from './voices.js';

/**
 * Every webhook event, said once (docs/CONTRACT.md#events, docs/ARCHITECTURE.md#how-to-add-a-webhook-event):
 * who receives it and what its delivery carries besides `event`, `voice_id` and `timestamp`
 * (docs/CONTRACT.md#webhook-deliveries). The event lists, the origin's `recordEvent` types and the
 * guides' tables (test/architecture/webhook-events.test.ts) follow from this table.
 *
 * - `owner`: the fields the voice's owner receives (their endpoints, and administrators'), when they do;
 * - `platform`: the fields the platform the event is about receives (its own endpoints only), when it does;
 * - `ordered`: an event that changes a voice's state: an endpoint receives one voice's such events in
 *   the order they occurred, each waiting while an earlier one of the same voice is retried. The
 *   others report something that happened and go out independently.
 */
interface WebhookEventRule {
  readonly owner?: z.ZodObject;
  readonly platform?: z.ZodObject;
  readonly ordered: boolean;
  /** Registrable, never sent (`enrollment.ready` belongs to enrollment sessions, which this service does not have). */
  readonly neverSent?: true;
}

/** The owner's view of a licence change: which licence, with which platform, until when. */
const ownerLicenceChange = licenseSchema.pick({ license_id: true, platform_name: true, expires_at: true });
/** The platform's own copy: its licence's fields only, nothing about the owner. */
const platformLicenceChange = licenseSchema.pick({ license_id: true, scopes: true, expires_at: true });
/** A licence's terms, as every answer shows them. */
const TERMS = { description: true, description_source: true, represented_by: true, compensation: true } as const;
/** Which side of a review the receiving owner's voice is on: held, resembled, or disputed (docs/DECISIONS.md#voice-disputes). */
const reviewRole = z.object({ role: z.enum(['held_voice', 'matched_voice', 'disputed_voice']) });

export const WEBHOOK_EVENT_RULES = {
  'enrollment.complete': {
    owner: z.object({ name: z.string(), model: z.string(), status: z.enum(VOICE_STATUSES) }),
    ordered: true,
  },
  // No voice exists for a failed attempt: the event names only its owner.
  'enrollment.failed': { owner: z.object({ name: z.string(), reason: z.string() }), ordered: false },
  'enrollment.ready': { owner: z.object({}), ordered: false, neverSent: true },
  'voice.review_pending': { owner: reviewRole, ordered: true },
  'voice.review_cleared': { owner: reviewRole, ordered: true },
  'voice.review_rejected': { owner: reviewRole, ordered: true },
  // To the claimant when their dispute ends (decided, or the voice erased by its owner); it names a voice
  // only once one was transferred to them.
  'voice.dispute_closed': {
    owner: z.object({ dispute_id: uuid, status: z.enum(DISPUTE_STATUSES).exclude(['open']) }),
    ordered: false,
  },
  'license.renewed': { owner: ownerLicenceChange, platform: platformLicenceChange, ordered: true },
  'license.revoked': { owner: ownerLicenceChange, platform: platformLicenceChange, ordered: true },
  'license.expired': { owner: ownerLicenceChange, platform: platformLicenceChange, ordered: true },
  'voice.deleted': { owner: z.object({ erased: deletedVoiceSchema.shape.erased }), ordered: true },
  'pre_synthesis.blocked': {
    owner: z.object({
      platform_name: z.string().nullable(),
      intended_use: z.enum(INTENDED_USES).nullable(),
      reason: z.string().nullable().describe('no_consent, no_license or scope_mismatch'),
      check_id: uuid,
      authorization_denied: z.literal(true),
    }),
    ordered: false,
  },
  // Sent by screening in both variants, and by a Variant B comparison; once per voice per call.
  'voice.detected': {
    owner: z.object({
      owner_id: uuid,
      platform: z.string(),
      confidence: z.number(),
      audio_url: z.null(),
      action_required: z.boolean(),
    }),
    ordered: false,
  },
  'license.requested': {
    // The request as its answer shows it: what was asked, and the terms approving it would record.
    owner: licenseRequestSchema.pick({ request_id: true, platform_name: true, scopes: true, expires_at: true, message: true, ...TERMS }),
    ordered: false,
  },
  'provenance.verification_failed': {
    owner: z.object({
      owner_id: uuid,
      verdict: z.enum(PROVENANCE_VERDICTS),
      verification_check_id: uuid,
      authorization_check_id: uuid.nullable(),
      platform_name: z.string().nullable(),
      signer: z.string().nullable(),
    }),
    ordered: false,
  },
  // The licence token is shown only here (sealed at rest, opened for the delivery).
  'license.granted': {
    platform: licenseSchema
      .pick({ license_id: true, scopes: true, expires_at: true, ...TERMS, license_terms_sha256: true })
      .extend({ request_id: uuid, license_token: z.string() }),
    ordered: true,
  },
  'license.request_declined': { platform: z.object({ request_id: uuid, reason: z.string().nullable() }), ordered: true },
} as const satisfies Record<string, WebhookEventRule>;

type Rules = typeof WEBHOOK_EVENT_RULES;
export type WebhookEvent = keyof Rules;
export const WEBHOOK_EVENTS = Object.keys(WEBHOOK_EVENT_RULES) as [WebhookEvent, ...WebhookEvent[]];

const eventsWhere = (test: (rule: WebhookEventRule) => boolean) =>
  WEBHOOK_EVENTS.filter((event) => test(WEBHOOK_EVENT_RULES[event] as WebhookEventRule));

/** Events that change a voice's state, delivered in order per voice and endpoint. */
export const ORDERED_WEBHOOK_EVENTS: readonly WebhookEvent[] = eventsWhere((rule) => rule.ordered);

/** Who receives an event's delivery. */
export type WebhookRecipient = 'owner' | 'platform';
type EventsFor<R extends WebhookRecipient> = { [E in WebhookEvent]: Rules[E] extends Record<R, z.ZodObject> ? E : never }[WebhookEvent];
export type PlatformWebhookEvent = EventsFor<'platform'>;
export type OwnerWebhookEvent = EventsFor<'owner'>;

/** What a platform key may subscribe to: the events about its own licences and requests, nothing of an owner's. */
export const PLATFORM_WEBHOOK_EVENTS = eventsWhere((rule) => rule.platform !== undefined) as PlatformWebhookEvent[];
/** What an account may subscribe to: every event an owner receives. */
export const OWNER_WEBHOOK_EVENTS = eventsWhere((rule) => rule.owner !== undefined) as OwnerWebhookEvent[];

/** The fields of event `E` for recipient `R`, as its emitter passes them (`event`, `voice_id` and `timestamp` are added). */
export type WebhookEventFields<E extends WebhookEvent, R extends WebhookRecipient> =
  Rules[E] extends Record<R, infer S extends z.ZodObject> ? z.input<S> : never;

/** The schema of event `event`'s fields for `recipient`; a recipient the event does not go to is an error. */
export function webhookEventFields(event: WebhookEvent, recipient: WebhookRecipient): z.ZodObject {
  const schema = (WEBHOOK_EVENT_RULES[event] as WebhookEventRule)[recipient];
  if (!schema) throw new Error(`${event} is not sent to a ${recipient}`);
  return schema;
}
