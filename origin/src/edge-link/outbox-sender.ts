import { INTERNAL_SYNC_PATH, type SyncBatch, syncAckSchema } from '@vip/shared-schema';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/client.js';
import type { RoundOutcome } from '../loops/background-loop.js';
import type { Clock } from '../runtime.js';
import { callEdge, EdgeAnswerError } from './edge-call.js';
import { claimDueUpdates, markDelivered, markFailed } from './outbox-store.js';

export interface OutboxSenderOptions {
  db: Database;
  edge: { url: string; internalSecret: string };
  clock: Clock;
  log: FastifyBaseLogger;
  fetch?: typeof fetch;
  batchSize?: number;
  /** Backoff after a failed send: base · 2^attempts, capped. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** How long claimed rows stay hidden from other senders; longer than one send can take. */
  leaseMs?: number;
  requestTimeoutMs?: number;
}

/** How long the edge sync loop sleeps when nothing is due; the outbox's nudge ends it early. */
export const EDGE_SYNC_IDLE_MS = 2_000;

/**
 * Pushes the edge outbox to the edge's internal sync route, oldest first, until acknowledged.
 * Its state lives in the table, so a restart or an edge outage loses nothing. Run by a
 * `BackgroundLoop` woken by the outbox's `WakeSignal` (jobs/background-jobs.ts), one per process.
 */
export class OutboxSender {
  private readonly options: Required<OutboxSenderOptions>;

  constructor(options: OutboxSenderOptions) {
    this.options = {
      fetch: globalThis.fetch,
      batchSize: 100,
      retryBaseMs: 500,
      retryMaxMs: 30_000,
      leaseMs: 30_000,
      requestTimeoutMs: 10_000,
      ...options,
    };
  }

  /** One batch: claim, send, and record the outcome. `busy` after a delivery; after a failure, when the rows are due again. */
  async sendDueBatch(): Promise<RoundOutcome> {
    const { db, clock, batchSize, leaseMs } = this.options;
    const now = clock.now();
    const claimed = await claimDueUpdates(db, now, new Date(now.getTime() + leaseMs), batchSize);
    if (claimed.length === 0) return 'idle';
    const ids = claimed.map((row) => row.id);
    const batch = { updates: claimed.map((row) => ({ ...row.payload, version: row.id })) } as SyncBatch;
    const failure = await this.post(JSON.stringify(batch));
    if (!failure) {
      await markDelivered(db, ids, clock.now());
      return 'busy';
    }
    const attempts = Math.max(...claimed.map((row) => row.attempts));
    const delay = Math.min(this.options.retryMaxMs, this.options.retryBaseMs * 2 ** attempts);
    await markFailed(db, ids, new Date(clock.now().getTime() + delay), failure);
    this.options.log.warn(
      { updates: ids.length, attempts: attempts + 1, retry_in_ms: delay, error: failure },
      'edge sync failed; will retry',
    );
    return { waitMs: delay };
  }

  /** Returns why the send failed, or null when the edge acknowledged it. */
  private async post(body: string): Promise<string | null> {
    const { edge, fetch, clock, requestTimeoutMs } = this.options;
    try {
      await callEdge(
        { edge, fetch, clock, timeoutMs: requestTimeoutMs },
        INTERNAL_SYNC_PATH,
        body,
        syncAckSchema,
        'a sync acknowledgement',
      );
      return null;
    } catch (error) {
      return error instanceof EdgeAnswerError ? error.message : `edge unreachable: ${(error as Error).message}`;
    }
  }
}
