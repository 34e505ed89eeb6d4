import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/client.js';
import type { RoundOutcome } from '../jobs/background-loop.js';
import type { Clock } from '../runtime.js';
import { nextAttemptDelayMs, parseRetryAfter } from './schedule.js';
import { attemptSummary, type SenderSettings, sendWebhook } from './sender.js';
import * as store from './store.js';

export interface WebhookWorkerOptions {
  db: Database;
  clock: Clock;
  log: FastifyBaseLogger;
  sender: SenderSettings;
  /** Delay before each attempt, seconds (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: readonly number[];
  /** ± fraction of each delay; 0 in tests that time retries. */
  jitter?: number;
  random?: () => number;
  batchSize?: number;
  /** Longer than one attempt can take (the 15 s timeout), so a claimed delivery is never sent twice at once. */
  leaseMs?: number;
  /**
   * How long a round waits for the attempts it started. Attempts still running then (a receiver that
   * does not answer) finish in the background, so they never hold back other endpoints' deliveries.
   */
  roundWaitMs?: number;
  newMessageId?: () => string;
}

/**
 * Delivers domain events to webhook endpoints (docs/CONTRACT.md#answers-to-the-specifications-gaps). Fan-out turns each event into
 * one delivery row per matching endpoint; delivery claims each endpoint's oldest pending row,
 * sends it signed, and records the outcome. All state is in tables: a restart resumes, a crash
 * mid-send re-sends once the lease ends (same webhook-id, so receivers can deduplicate).
 */
export class WebhookWorker {
  private readonly options: Required<WebhookWorkerOptions>;
  /** Attempts started by earlier rounds that have not finished yet. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(options: WebhookWorkerOptions) {
    this.options = {
      jitter: 0.1,
      random: Math.random,
      batchSize: 50,
      leaseMs: 60_000,
      roundWaitMs: 1_000,
      newMessageId: () => `msg_${randomUUID()}`,
      ...options,
    };
  }

  async round(): Promise<RoundOutcome> {
    const fannedOut = await this.fanOut();
    const delivered = await this.deliverDue();
    if (fannedOut === this.options.batchSize || delivered === this.options.batchSize) return 'busy';
    const due = await store.nextDueAt(this.options.db);
    if (!due) return 'idle';
    return { waitMs: Math.max(0, due.getTime() - this.options.clock.now().getTime()) };
  }

  /** Creates delivery rows for events not fanned out yet; returns how many events it handled. */
  async fanOut(): Promise<number> {
    const { db, batchSize, newMessageId } = this.options;
    return db.transaction(async (tx) => {
      await store.lockFanOut(tx);
      const events = await store.eventsToFanOut(tx, batchSize);
      if (events.length === 0) return 0;
      const subscribers = await store.activeSubscribers(tx);
      const deliveries = events.flatMap((event) =>
        subscribers
          .filter((endpoint) => receives(endpoint, event))
          .map((endpoint) => ({
            messageId: newMessageId(),
            endpointId: endpoint.id,
            eventId: event.id,
            eventType: event.eventType,
            occurredAt: event.occurredAt,
            body: JSON.stringify(event.payload),
            nextAttemptAt: event.occurredAt,
          })),
      );
      await store.insertDeliveries(tx, deliveries);
      await store.markFannedOut(
        tx,
        events.map((event) => event.id),
      );
      return events.length;
    });
  }

  /**
   * Sends every due endpoint head once; returns how many it attempted. Waits for those attempts up to
   * `roundWaitMs`: a hung receiver holds its own delivery (claimed under the lease) until the timeout,
   * never the round, so the next round goes on delivering to every other endpoint.
   */
  async deliverDue(): Promise<number> {
    const { db, clock, batchSize, leaseMs, roundWaitMs, log } = this.options;
    const now = clock.now();
    const claimed = await store.claimDueDeliveries(db, now, new Date(now.getTime() + leaseMs), batchSize);
    if (claimed.length === 0) return 0;
    const attempts = claimed.map((delivery) => {
      const attempt: Promise<void> = this.attempt(delivery)
        .catch((error) => {
          // Recording the outcome failed (the database went away): the lease ends and the delivery is sent again.
          log.warn({ err: error, webhook_id: delivery.endpointId }, 'webhook attempt could not be recorded');
        })
        .finally(() => this.inFlight.delete(attempt));
      this.inFlight.add(attempt);
      return attempt;
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(attempts), new Promise((resolve) => (timer = setTimeout(resolve, roundWaitMs)))]);
    clearTimeout(timer);
    return claimed.length;
  }

  /** Waits for the attempts still running (each ends by its timeout); call before closing the database. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private async attempt(delivery: store.ClaimedDelivery): Promise<void> {
    const { db, clock, sender, log } = this.options;
    const sentAt = clock.now();
    const outcome = await sendWebhook(
      {
        webhookId: delivery.endpointId,
        url: delivery.url,
        messageId: delivery.messageId,
        body: delivery.body,
        storedSecrets: signingSecrets(delivery, sentAt),
        timestampSeconds: Math.floor(sentAt.getTime() / 1000),
      },
      sender,
    );
    const now = clock.now();
    const record: store.AttemptRecord = { ...attemptSummary(outcome), at: now };
    if (outcome.kind === 'unsigned') {
      // A wrong or missing SECRETS_ENCRYPTION_KEYS entry, or a value moved between rows: only an operator can fix it.
      log.error(
        { webhook_id: delivery.endpointId, message_id: delivery.messageId, reason: outcome.reason },
        'webhook delivery not sent: its signing secret could not be decrypted',
      );
    }
    if (record.error === null) {
      await store.markDelivered(db, delivery.id, record);
      return;
    }
    if (outcome.kind === 'response' && outcome.statusCode === 410) {
      await store.markGivenUp(db, delivery.id, record);
      await store.disableEndpoint(db, delivery.endpointId, now);
      log.info({ webhook_id: delivery.endpointId }, 'webhook endpoint answered 410 Gone; disabled');
      return;
    }
    const retryAfter = outcome.kind === 'response' ? parseRetryAfter(outcome.retryAfter, now) : null;
    const delay = nextAttemptDelayMs(
      this.options.retrySchedule,
      delivery.attempts + 1,
      retryAfter,
      this.options.random,
      this.options.jitter,
    );
    if (delay === null) {
      await store.markGivenUp(db, delivery.id, record);
      log.warn({ webhook_id: delivery.endpointId, message_id: delivery.messageId }, 'webhook delivery given up after the last retry');
      return;
    }
    await store.markRetry(db, delivery.id, record, new Date(now.getTime() + delay));
  }
}

/**
 * An event addressed to a platform (its own licence or request) goes to that platform's endpoints
 * and nowhere else, not even to admins: it may carry a licence token. Other events: admins receive
 * every one, an owner those of their voices; events without an owner go to admins only. A
 * platform's endpoint receives nothing else.
 */
function receives(endpoint: store.Subscriber, event: store.PendingEvent): boolean {
  if (!endpoint.events.includes(event.eventType)) return false;
  if (event.platformName !== null || endpoint.platformName !== null) return event.platformName === endpoint.platformName;
  return endpoint.ownerIsAdmin || (event.ownerId !== null && event.ownerId === endpoint.ownerId);
}

/** The stored (encrypted) secrets that sign a delivery sent at `now`. */
export function signingSecrets(
  endpoint: { secret: string; previousSecret: string | null; previousSecretUntil: Date | null },
  now: Date,
): string[] {
  const graceOpen = endpoint.previousSecret && endpoint.previousSecretUntil && endpoint.previousSecretUntil > now;
  return graceOpen ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret];
}
