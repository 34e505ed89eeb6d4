import type { AuditEntry, AuditRecord } from './audit.js';
import type { ConsentStatus, Decision } from './enums.js';

/**
 * Every kind of audit record, said once (docs/ARCHITECTURE.md#how-to-add-an-audit-kind): the actions
 * its records carry and the decision each records, who reads it besides administrators, and its
 * words in the owner console's timeline (webhook events are webhook-events.ts's). A new kind is one
 * entry here plus its emitter, which builds its records with `buildAuditRecord`.
 *
 * This module holds no zod, so the browser bundles can take the words without the schemas.
 */

/**
 * Who may read a record, besides an administrator (origin/src/audit/store.ts `visibleTo`): the owner
 * of the voice it names, the platform it names, and the account that caused it (a `user` caller).
 * A record may name a voice, a platform or a user caller only when that reader may see it.
 */
export type AuditReaderRole = 'owner' | 'platform' | 'caller';

/** The fields an entry's words read (not AuditEntry, whose type is built from this table). */
interface WordedEntry {
  voice_id: string | null;
  decision: Decision | null;
  action: string | null;
  reason: string | null;
  license_status: string | null;
  consent_status: ConsentStatus | null;
}
/** `who`: the platform, "you" or the service; `use`: " for <intended use>" or "". */
type Words = (entry: WordedEntry, who: string, use: string) => string;

interface AuditKindRule {
  /** Each action the kind's records carry, with the decision it records (null: not a decision about synthesis). */
  readonly actions: Readonly<Record<string, Decision | null>>;
  readonly readers: readonly AuditReaderRole[];
  readonly words: Words;
}

/** What synthesis consent is, in the console's words. */
export const CONSENT_WORDS: Record<string, string> = {
  active: 'on: platforms with a licence may synthesize it',
  withdrawn: 'off: every platform is refused',
  unknown: 'not given yet: every platform is refused',
};

/** A reason's code in words: `scope_mismatch` reads "scope mismatch". */
const spaced = (code: string | null) => (code ?? '').replaceAll('_', ' ');
/** The verdicts of a file's watermark, which their codes alone would word badly (docs/CONTRACT.md#the-audio-watermark-in-a-verification). */
const WATERMARK_VERDICT_WORDS: Record<string, string> = {
  watermark_authorized: 'authorized by its watermark',
  watermark_not_issued: 'its watermark was never issued by this service',
  credentials_watermark_mismatch: 'its Content Credentials and its watermark name different checks',
};
/** What a reason of the form `<what happened>:<ids>` says happened, in words. */
const happened = (reason: string | null) => spaced(reason).split(':')[0]!;

export const AUDIT_KIND_RULES = {
  'gate.decision': {
    actions: { authorized: 'allow', authorization_denied: 'deny', no_registry_record: 'unresolved' },
    readers: ['owner', 'platform', 'caller'],
    words: (entry, who, use) =>
      `${who} asked to synthesize it${use}: ${entry.decision === 'allow' ? 'approved' : entry.decision === 'deny' ? 'blocked' : 'unresolved'}${entry.reason ? ` (${spaced(entry.reason)})` : ''}.`,
  },
  'authorization.redeemed': {
    actions: { redeemed: 'allow', refused: 'deny' },
    readers: ['owner', 'platform', 'caller'],
    // A refused redemption (a token used twice, or revoked meanwhile) is audited under the same kind.
    words: (entry, who, use) =>
      entry.action === 'refused'
        ? `${who} tried to redeem an authorization token${use}: refused (${spaced(entry.reason)}).`
        : `${who} redeemed its authorization token${use}.`,
  },
  // A first enrollment and a re-recording write the same entry: both store a new voiceprint.
  'enrollment.completed': {
    actions: { enrolled: 'allow' },
    readers: ['owner', 'caller'],
    words: (entry) =>
      `A new voiceprint was enrolled for this voice${entry.reason === 'pending_review' ? '; it is held for review, as it sounds very close to a voice of another owner' : ''}.`,
  },
  // On the matched voice, as the service's: the refused caller must not learn that voice's id.
  'enrollment.refused': {
    actions: { refused: 'deny' },
    readers: ['owner'],
    words: () => 'Another owner tried to enroll a voice that sounds like this one: refused (identity conflict).',
  },
  // No voice yet: the consent is spent by the enrollment that uses it.
  'biometric_consent.granted': {
    actions: { granted: null },
    readers: ['caller'],
    words: (entry) => `You consented to a voiceprint of your voice (${spaced(entry.reason)}).`,
  },
  // The voice is named: the recording was checked for the enrollment that made it.
  'spoken_consent.verified': {
    actions: { verified: 'allow' },
    readers: ['owner', 'caller'],
    words: () => 'The spoken consent was checked: the statement and the challenge phrase, read in this voice.',
  },
  'consent.changed': {
    actions: { changed: null },
    readers: ['owner', 'caller'],
    words: (entry) => `Synthesis consent is now ${CONSENT_WORDS[entry.consent_status ?? 'unknown'] ?? entry.consent_status}.`,
  },
  // The reason is `license_<created|renewed|revoked|expired>:<license_id>`; creation has no event.
  'license.changed': {
    actions: { changed: null },
    readers: ['owner', 'platform', 'caller'],
    words: (entry, who) => `A licence for ${who} was ${happened(entry.reason).replace(/^license /, '') || 'changed'}.`,
  },
  'voice.deleted': {
    actions: { deleted: null },
    readers: ['owner', 'caller'],
    words: () => 'The voice was deleted.',
  },
  // Both voices of an identity review get the entry; the held one is the newer voiceprint.
  'voice.review': {
    actions: { held: 'unresolved', cleared: 'allow', rejected: 'deny' },
    readers: ['owner', 'caller'],
    words: (entry) =>
      entry.action === 'held'
        ? 'Held for an identity review: this voice and a voice of another owner sound very close, so an administrator checks them.'
        : `An administrator ended the identity review: the held voice was ${entry.action === 'cleared' ? 'cleared and is protected' : 'rejected and erased'}.`,
  },
  // A dispute (docs/DECISIONS.md#voice-disputes). Opened: one entry under the claimant naming no voice
  // (its receipt shows when the dispute was filed) and one on the disputed voice as the service's, so
  // neither side learns the other's ids. Decided: an entry on the disputed voice (reason
  // `disputed_voice`) and, for a transfer, one on the claimant's new voice (reason `claimant`).
  'voice.dispute': {
    actions: { opened: 'unresolved', cleared: null, rejected: null, transferred: null },
    readers: ['owner', 'caller'],
    words: (entry) => {
      if (entry.action === 'opened') {
        return entry.voice_id
          ? 'Someone disputes this voice: they read the spoken consent in it and it passed its checks. It is held, granting nothing, until an administrator decides.'
          : 'You disputed a voice of another owner that sounds like yours: it is held until an administrator decides.';
      }
      if (entry.reason === 'claimant')
        return 'An administrator decided your dispute: the disputed voice was transferred to you as this voice.';
      const outcome = {
        cleared: 'it stays with its owner and is protected',
        rejected: 'it was erased',
        transferred: 'it was erased and transferred to the person who disputed it',
      };
      return `An administrator ended the dispute of this voice: ${outcome[entry.action as keyof typeof outcome] ?? entry.action}.`;
    },
  },
  // Under the screening platform and no voice: an owner never sees another voice's match.
  // The platform's entry names no voice; each matched voice gets an entry of its own match, under it
  // (reason `screening_match:<screening check>:<confidence>`), so one owner never reads another's.
  screening: {
    actions: { screened: null },
    readers: ['owner', 'platform', 'caller'],
    words: (entry, who) =>
      entry.voice_id
        ? `${who} screened a recording, and it matched this voice (confidence ${entry.reason?.split(':')[2] ?? 'unknown'}); ${entry.license_status === 'licensed' ? 'it holds a licence for it' : 'it holds no licence for it'}.`
        : `${who} screened a recording against the enrolled voices.`,
  },
  'license.requested': {
    actions: { requested: null },
    readers: ['owner', 'platform', 'caller'],
    words: (_entry, who) => `${who} asked you for a licence.`,
  },
  // Someone checked a file whose Content Credentials, or whose watermark alone, name this voice and
  // platform; the reason is `verdict=<verdict>;authorization=<check_id>;signer=<common name>;named_by=<credentials|watermark|none>`
  // (docs/CONTRACT.md#verifying-a-file).
  'provenance.verification': {
    actions: { verified: null },
    readers: ['owner', 'platform', 'caller'],
    words: (entry, who) => {
      const verdict = /^verdict=([a-z_]+)/.exec(entry.reason ?? '')?.[1] ?? 'unknown';
      const file = /;named_by=watermark\b/.test(entry.reason ?? '')
        ? 'a file without Content Credentials whose watermark names'
        : 'a file whose Content Credentials name';
      return `Someone checked ${file} this voice and ${who}: ${WATERMARK_VERDICT_WORDS[verdict] ?? spaced(verdict)}.`;
    },
  },
  // Someone looked up a watermark id (C2PA soft-binding resolution, by binding or by content) that
  // resolved to an authorization of this voice and platform; the reason is
  // `lookup=<binding|content>;authorization=<check_id>;matches=<n>` (docs/CONTRACT.md#the-soft-binding-resolution-api).
  'provenance.lookup': {
    actions: { looked_up: null },
    readers: ['owner', 'platform', 'caller'],
    words: (entry, who) =>
      `Someone looked up a watermark ${who} wrote into audio of this voice (${/^lookup=([a-z]+)/.exec(entry.reason ?? '')?.[1] ?? 'unknown'}).`,
  },
  // The reason starts with how the request ended (approved, declined, consent_withdrawn, voice_deleted), then its ids.
  'license.request_closed': {
    actions: { closed: null },
    readers: ['owner', 'platform', 'caller'],
    words: (entry, who) => `The licence request of ${who} was closed: ${happened(entry.reason)}.`,
  },
} as const satisfies Record<string, AuditKindRule>;

type Rules = typeof AUDIT_KIND_RULES;
export type AuditKind = keyof Rules;
export const AUDIT_KINDS = Object.keys(AUDIT_KIND_RULES) as [AuditKind, ...AuditKind[]];

export type AuditAction<K extends AuditKind = AuditKind> = K extends AuditKind ? keyof Rules[K]['actions'] & string : never;
/** Every action any kind carries, each once. */
export const AUDIT_ACTIONS = [...new Set(Object.values(AUDIT_KIND_RULES).flatMap((rule) => Object.keys(rule.actions)))] as [
  AuditAction,
  ...AuditAction[],
];

/** True when T is a union of two or more members. */
type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never;

type Optional =
  | 'voice_id'
  | 'platform_name'
  | 'intended_use'
  | 'reason'
  | 'license_status'
  | 'consent_status'
  | 'caller_id'
  | 'token_jti'
  | 'license_terms_sha256';

/**
 * What an emitter says about one record: the fields it sets (the rest are null), and the action,
 * which a kind of one action need not name. The decision follows from the action.
 */
export type AuditRecordFields<K extends AuditKind> = K extends AuditKind
  ? { check_id: string; decided_at: Date; caller_type: AuditRecord['caller_type'] } & Partial<Pick<AuditRecord, Optional>> &
      (true extends IsUnion<AuditAction<K>> ? { action: AuditAction<K> } : { action?: AuditAction<K> })
  : never;

/** Builds a record of `kind`; a field its readers may not see (a voice for a kind no owner reads) throws. */
export function buildAuditRecord<K extends AuditKind>(kind: K, fields: AuditRecordFields<K>): AuditRecord {
  const rule: AuditKindRule = AUDIT_KIND_RULES[kind];
  const actions = Object.keys(rule.actions);
  const action = fields.action ?? (actions.length === 1 ? actions[0] : undefined);
  if (action === undefined || !(action in rule.actions)) throw new Error(`${kind} has no action ${String(action)}`);
  const record: AuditRecord = {
    check_id: fields.check_id,
    kind,
    decided_at: fields.decided_at.toISOString(),
    voice_id: fields.voice_id ?? null,
    platform_name: fields.platform_name ?? null,
    intended_use: fields.intended_use ?? null,
    decision: rule.actions[action] ?? null,
    action: action as AuditAction,
    reason: fields.reason ?? null,
    license_status: fields.license_status ?? null,
    consent_status: fields.consent_status ?? null,
    caller_type: fields.caller_type,
    caller_id: fields.caller_id ?? null,
    token_jti: fields.token_jti ?? null,
    // Only where there are terms: an entry without them hashes as entries always did.
    ...(fields.license_terms_sha256 === undefined ? {} : { license_terms_sha256: fields.license_terms_sha256 }),
  };
  const unreadable =
    (record.voice_id !== null && !rule.readers.includes('owner')) ||
    (record.platform_name !== null && !rule.readers.includes('platform')) ||
    (record.caller_type === 'user' && !rule.readers.includes('caller'));
  if (unreadable) throw new Error(`a ${kind} record names a reader its kind does not allow (${rule.readers.join(', ')})`);
  return record;
}

/** An entry of the chain in the console's words. */
export function auditEntryWords(entry: AuditEntry): string {
  const who = entry.platform_name ?? (entry.caller_type === 'user' ? 'you' : entry.caller_type);
  const use = entry.intended_use ? ` for ${entry.intended_use}` : '';
  return AUDIT_KIND_RULES[entry.kind].words(entry, who, use);
}
