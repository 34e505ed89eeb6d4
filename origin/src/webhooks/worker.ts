import { randomUUID } from 'node:crypto';
import { ORDERED_WEBHOOK_EVENTS } from '@vip/shared-schema';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/client.js';
import type { RoundOutcome } from '../loops/background-loop.js';
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
  /** Deliveries of one endpoint in flight at most, all processes together (WEBHOOK_CONCURRENCY). */
  concurrencyPerEndpoint: number;
  /** ± fraction of each delay; 0 in tests that time retries. */
  jitter?: number;
  random?: () => number;
  batchSize?: number;
  /** Longer than one attempt can take (the 15 s timeout), so a claimed delivery is never sent twice at once. */
  leaseMs?: number;
  /**
   * How long a round waits for one of the attempts under way to end (then it fills the place at once),
   * and `deliverDue` for all of those it started. Attempts still running then (a receiver that does
   * not answer) finish in the background, so they never hold back other deliveries.
   */
  roundWaitMs?: number;
  newMessageId?: () => string;
}

/** How soon a round looks again at a due delivery it could not claim: its endpoint's places are all taken by another process. */
const CONTENDED_POLL_MS = 250;
/**
 * While attempts keep ending, a round runs after each: it fans out again only this long after the
 * last fan-out that found less than a batch (the fan-out's anti-join is the round's costly query).
 */
const FAN_OUT_EVERY_MS = 200;

/**
 * Delivers domain events to webhook endpoints (docs/CONTRACT.md#answers-to-the-specifications-gaps). Fan-out turns each event into
 * one delivery row per matching endpoint; delivery claims due rows, up to `concurrencyPerEndpoint`
 * in flight per endpoint (one voice's state events one at a time, in order: the order key), sends
 * them signed, and records the outcome; a failed attempt is rescheduled and its place goes to the
 * next delivery. All state is in tables: a restart resumes, a crash mid-send re-sends once the
 * lease ends (same webhook-id, so receivers can deduplicate).
 */
export class WebhookWorker {
  private readonly options: Required<WebhookWorkerOptions>;
  /** Attempts started by earlier rounds that have not finished yet. */
  private readonly inFlight = new Set<Promise<void>>();
  private lastFanOut = { at: Number.NEGATIVE_INFINITY, full: false };
  /** The last round ended because an attempt ended, not after a wait: its fan-out may be skipped. */
  private refilling = false;

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

  /**
   * Fans out, then fills every free place in flight. While attempts are under way it waits for one
   * of them to end (at most `roundWaitMs`) and asks for the next round at once, so a place is
   * refilled as soon as it frees up, and a receiver that hangs holds only its own places.
   */
  async round(): Promise<RoundOutcome> {
    const { db, clock, batchSize, roundWaitMs } = this.options;
    const skipFanOut = this.refilling && !this.lastFanOut.full && performance.now() - this.lastFanOut.at < FAN_OUT_EVERY_MS;
    this.refilling = false;
    const fannedOut = skipFanOut ? 0 : await this.fanOut();
    const started = await this.startDue();
    if (fannedOut === batchSize || started.length === batchSize) return 'busy';
    if (this.inFlight.size > 0) {
      await settledOrTimeout([...this.inFlight], roundWaitMs, 'any');
      this.refilling = true;
      return 'busy';
    }
    const due = await store.nextDueAt(db);
    if (!due) return 'idle';
    const waitMs = due.getTime() - clock.now().getTime();
    return { waitMs: waitMs > 0 ? waitMs : CONTENDED_POLL_MS };
  }

  /** Creates delivery rows for events not fanned out yet; returns how many events it handled. */
  async fanOut(): Promise<number> {
    const { db, batchSize, newMessageId } = this.options;
    const fannedOut = await db.transaction(async (tx) => {
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
            orderKey: orderKeyOf(event),
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
    this.lastFanOut = { at: performance.now(), full: fannedOut === batchSize };
    return fannedOut;
  }

  /**
   * Sends what is due, as far as the places in flight allow; returns how many it attempted. Waits
   * for those attempts up to `roundWaitMs`: a hung receiver holds its own deliveries (claimed under
   * the lease) until the timeout, never the caller. Tests and benches call it for one pass.
   */
  async deliverDue(): Promise<number> {
    const attempts = await this.startDue();
    if (attempts.length > 0) await settledOrTimeout(attempts, this.options.roundWaitMs, 'all');
    return attempts.length;
  }

  /** Claims due deliveries and starts their attempts; returns the attempts, which never reject. */
  private async startDue(): Promise<Promise<void>[]> {
    const { db, clock, batchSize, leaseMs, concurrencyPerEndpoint, log } = this.options;
    const now = clock.now();
    const claimed = await store.claimDueDeliveries(db, now, new Date(now.getTime() + leaseMs), {
      total: batchSize,
      perEndpoint: concurrencyPerEndpoint,
    });
    return claimed.map((delivery) => {
      const attempt: Promise<void> = this.attempt(delivery)
        .catch((error) => {
          // Recording the outcome failed (the database went away): the lease ends and the delivery is sent again.
          log.warn({ err: error, webhook_id: delivery.endpointId }, 'webhook attempt could not be recorded');
        })
        .finally(() => this.inFlight.delete(attempt));
      this.inFlight.add(attempt);
      return attempt;
    });
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

/** One voice's state events share an order key, so an endpoint gets them one at a time, in order; other events have none. */
function orderKeyOf(event: store.PendingEvent): string | null {
  const ordered: readonly string[] = ORDERED_WEBHOOK_EVENTS;
  return event.voiceId !== null && ordered.includes(event.eventType) ? event.voiceId : null;
}

/** Resolves when all (or any) of `attempts` have settled, or after `ms`, whichever is first. */
async function settledOrTimeout(attempts: Promise<void>[], ms: number, which: 'all' | 'any'): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const settled = which === 'all' ? Promise.all(attempts) : Promise.race(attempts);
  await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
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
