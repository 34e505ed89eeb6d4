import {
  type GateVariant,
  newWebhookSecret,
  OWNER_WEBHOOK_EVENTS,
  PLATFORM_WEBHOOK_EVENTS,
  ProblemError,
  WEBHOOK_TEST_EVENT,
  type WebhookEvent,
} from '@vip/shared-schema';
import type { Caller } from '../auth/index.js';
import type { Database } from '../db/client.js';
import type { DeliveryRow, EndpointRow } from '../db/schema.js';
import type { Runtime } from '../runtime.js';
import { checkWebhookUrl, type Resolver, systemResolver } from './address-guard.js';
import { SecretDecryptionError, SecretEncryption } from './secret-encryption.js';
import { attemptSummary, type SenderSettings, sendWebhook } from './sender.js';
import * as store from './store.js';
import { signingSecrets } from './worker.js';

export interface WebhookSettings {
  sender: SenderSettings;
  gateVariant: GateVariant;
  /** How long the secret before a rotation keeps signing, alongside the new one. */
  rotationGraceSeconds: number;
}

export interface WebhookServiceDeps {
  db: Database;
  runtime: Runtime;
  settings: WebhookSettings;
}

/** Why some of the events cannot be subscribed to by this subscriber, or null when all can. */
function refusedEvents(subscriber: store.WebhookSubscriber, events: readonly WebhookEvent[]): string | null {
  if (subscriber.kind === 'platform') {
    const allowed: readonly WebhookEvent[] = PLATFORM_WEBHOOK_EVENTS;
    return events.every((event) => allowed.includes(event))
      ? null
      : `a platform may subscribe only to ${PLATFORM_WEBHOOK_EVENTS.join(', ')}`;
  }
  // An event no owner receives would never reach an account's endpoint.
  const allowed: readonly WebhookEvent[] = OWNER_WEBHOOK_EVENTS;
  const platformOnly = events.filter((event) => !allowed.includes(event));
  return platformOnly.length === 0 ? null : `${platformOnly.join(', ')} go only to platforms`;
}

/** An account manages its endpoints (an admin everyone's); a platform key its platform's. */
function subscriberOf(caller: Caller): store.WebhookSubscriber {
  return caller.kind === 'platform'
    ? { kind: 'platform', platformName: caller.platformName }
    : { kind: 'account', userId: caller.userId, isAdmin: caller.role === 'admin' };
}

export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  async register(caller: Caller, request: { url: string; secret?: string; events: WebhookEvent[] }) {
    const { db, runtime, settings } = this.deps;
    const subscriber = subscriberOf(caller);
    const refusal = refusedEvents(subscriber, request.events);
    if (refusal) throw fieldProblem('body.events', refusal);
    const verdict = await checkWebhookUrl(request.url, settings.sender.resolve, settings.sender.allowLoopback);
    if (!verdict.ok) throw fieldProblem('body.url', verdict.reason);
    const id = runtime.newId();
    const secret = request.secret ?? newWebhookSecret(runtime.randomBytes(24));
    const row = await store.insertEndpoint(db, {
      id,
      ownerId: subscriber.kind === 'account' ? subscriber.userId : null,
      platformName: subscriber.kind === 'platform' ? subscriber.platformName : null,
      url: verdict.url.toString(),
      events: request.events,
      secret: settings.sender.secretEncryption.encrypt(secret, id),
      createdAt: runtime.clock.now(),
    });
    // The one answer, with rotation's, that carries the secret: its owner sees it here, and never again.
    return {
      webhook_id: row.id,
      url: row.url,
      events: row.events as WebhookEvent[],
      secret,
      created_at: row.createdAt.toISOString(),
    };
  }

  async list(caller: Caller) {
    return { webhooks: (await store.endpointsOf(this.deps.db, subscriberOf(caller))).map(toWebhook) };
  }

  async remove(caller: Caller, webhookId: string) {
    await this.endpointOf(caller, webhookId);
    await store.deleteEndpoint(this.deps.db, webhookId);
    return { webhook_id: webhookId, deleted: true as const };
  }

  /**
   * A receiver that answered 410 Gone is disabled and its queue dropped; its owner may want it back
   * (a redeploy, a mistake). The address is judged again, as at registration.
   */
  async enable(caller: Caller, webhookId: string) {
    const { db, settings } = this.deps;
    const endpoint = await this.endpointOf(caller, webhookId);
    const verdict = await checkWebhookUrl(endpoint.url, settings.sender.resolve, settings.sender.allowLoopback);
    if (!verdict.ok) throw fieldProblem('url', verdict.reason);
    return toWebhook(await store.enableEndpoint(db, webhookId));
  }

  async rotateSecret(caller: Caller, webhookId: string) {
    const { db, runtime, settings } = this.deps;
    const endpoint = await this.endpointOf(caller, webhookId);
    const secret = newWebhookSecret(runtime.randomBytes(24));
    const until = new Date(runtime.clock.now().getTime() + settings.rotationGraceSeconds * 1000);
    // The old value moves within its row, so it stays encrypted as it was.
    await store.rotateSecret(db, webhookId, settings.sender.secretEncryption.encrypt(secret, webhookId), endpoint.secret, until);
    return { webhook_id: webhookId, secret, previous_secret_valid_until: until.toISOString() };
  }

  /**
   * One signed `webhook.test` delivery, sent now and reported; it is not queued or retried. Its
   * outcome is recorded in the endpoint's delivery history.
   */
  async sendTest(caller: Caller, webhookId: string) {
    const { db, runtime, settings } = this.deps;
    const endpoint = await this.endpointOf(caller, webhookId);
    const now = runtime.clock.now();
    const messageId = `msg_test_${runtime.newId()}`;
    const body = JSON.stringify({ event: WEBHOOK_TEST_EVENT, voice_id: null, timestamp: now.toISOString(), webhook_id: webhookId });
    const outcome = await sendWebhook(
      {
        webhookId,
        url: endpoint.url,
        messageId,
        body,
        storedSecrets: signingSecrets(endpoint, now),
        timestampSeconds: Math.floor(now.getTime() / 1000),
      },
      settings.sender,
    );
    const { statusCode, error } = attemptSummary(outcome);
    await store.recordTestDelivery(
      db,
      { messageId, endpointId: webhookId, body, sentAt: now },
      { statusCode, error, at: runtime.clock.now() },
    );
    return { webhook_id: webhookId, message_id: messageId, delivered: error === null, status_code: statusCode, error };
  }

  /** The endpoint's most recent deliveries, newest first: outcomes and times, never the bodies sent. */
  async deliveries(caller: Caller, webhookId: string, query: { limit: number }) {
    await this.endpointOf(caller, webhookId);
    const rows = await store.recentDeliveries(this.deps.db, webhookId, query.limit);
    return { deliveries: rows.map(toDeliveryOutcome) };
  }

  /**
   * Brings every stored secret under the current key, run at start-up before anything is sent:
   * plaintext rows from before encryption existed, and rows under a key that is no longer first in
   * SECRETS_ENCRYPTION_KEYS. Returns the ids it could not decrypt (they stay as they are).
   */
  async reencryptStoredSecrets(): Promise<{ reencrypted: number; unreadable: string[] }> {
    const { db, settings } = this.deps;
    const encryption = settings.sender.secretEncryption;
    let reencrypted = 0;
    const unreadable: string[] = [];
    for (const row of await store.storedSecrets(db)) {
      try {
        const secret = encryption.reencrypt(row.secret, row.id);
        const previousSecret = row.previousSecret === null ? null : encryption.reencrypt(row.previousSecret, row.id);
        if (secret !== row.secret || previousSecret !== row.previousSecret) {
          if (await store.replaceStoredSecrets(db, row, { secret, previousSecret })) reencrypted++;
        }
      } catch (error) {
        if (!(error instanceof SecretDecryptionError)) throw error;
        unreadable.push(row.id);
      }
    }
    return { reencrypted, unreadable };
  }

  /**
   * Someone else's endpoint answers 404, as a missing one does: ids are not confirmed to strangers.
   * An admin manages accounts' endpoints; a platform's are its own alone.
   */
  private async endpointOf(caller: Caller, webhookId: string): Promise<EndpointRow> {
    const subscriber = subscriberOf(caller);
    const endpoint = await store.findEndpoint(this.deps.db, webhookId);
    const visible =
      endpoint !== null &&
      (subscriber.kind === 'platform'
        ? endpoint.platformName === subscriber.platformName
        : endpoint.ownerId === subscriber.userId || (subscriber.isAdmin && endpoint.ownerId !== null));
    if (!visible) throw new ProblemError('not_found', 'No such webhook.');
    return endpoint;
  }
}

const toWebhook = (row: EndpointRow) => ({
  webhook_id: row.id,
  url: row.url,
  events: row.events as WebhookEvent[],
  created_at: row.createdAt.toISOString(),
  disabled_at: row.disabledAt?.toISOString() ?? null,
  previous_secret_valid_until: row.previousSecretUntil?.toISOString() ?? null,
});

const toDeliveryOutcome = (row: DeliveryRow) => ({
  message_id: row.messageId,
  event: row.eventType as WebhookEvent | typeof WEBHOOK_TEST_EVENT,
  status: row.status,
  attempts: row.attempts,
  last_status_code: row.lastStatusCode,
  last_error: row.lastError,
  occurred_at: row.occurredAt.toISOString(),
  last_attempt_at: row.lastAttemptAt?.toISOString() ?? null,
  next_attempt_at: row.status === 'pending' ? row.nextAttemptAt.toISOString() : null,
  finished_at: row.finishedAt?.toISOString() ?? null,
});

const fieldProblem = (field: string, message: string) =>
  new ProblemError('validation_failed', 'The request body is invalid.', { errors: [{ field, message }] });

/** A receiver gets 15 s to answer (WEBHOOK_TIMEOUT_SECONDS); the old secret keeps signing for a day after a rotation. */
const WEBHOOK_TIMEOUT_MS = 15_000;
const ROTATION_GRACE_SECONDS = 24 * 3600;

export function webhookSettings(options: {
  allowLoopback: boolean;
  gateVariant: GateVariant;
  resolve?: Resolver;
  timeoutMs?: number;
  /** main.ts passes SECRETS_ENCRYPTION_KEYS; the default, a per-process key, suits tests only. */
  secretEncryption?: SecretEncryption;
}): WebhookSettings {
  return {
    sender: {
      resolve: options.resolve ?? systemResolver,
      allowLoopback: options.allowLoopback,
      timeoutMs: options.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
      secretEncryption: options.secretEncryption ?? SecretEncryption.withRandomKey(),
    },
    gateVariant: options.gateVariant,
    rotationGraceSeconds: ROTATION_GRACE_SECONDS,
  };
}
