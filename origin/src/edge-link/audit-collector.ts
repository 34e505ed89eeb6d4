import { type AuditPullRequest, auditPullResponseSchema, type EdgeAuditRecord, INTERNAL_AUDIT_PULL_PATH } from '@vip/shared-schema';
import type { FastifyBaseLogger } from 'fastify';
import { knownCheckIds, lockCollector, queueAuditRecords } from '../audit/index.js';
import type { Database } from '../db/client.js';
import type { RoundOutcome } from '../loops/background-loop.js';
import { registerMarks } from '../provenance/index.js';
import type { Clock } from '../runtime.js';
import { emitBlockedEvents } from './blocked-events.js';
import { callEdge } from './edge-call.js';

export interface AuditCollectorOptions {
  db: Database;
  edge: { url: string; internalSecret: string };
  clock: Clock;
  log: FastifyBaseLogger;
  /** Called after records were queued, so the appender and the webhook worker start at once. */
  onQueued?: () => void;
  fetch?: typeof fetch;
  batchSize?: number;
  requestTimeoutMs?: number;
  /** Backoff after a failed pull: base · 2^failures, capped. */
  retryBaseMs?: number;
  retryMaxMs?: number;
}

/**
 * Collects the edge's stored decisions (docs/CONTRACT.md#audit-chain). Each round acknowledges the check_ids
 * the previous round committed to audit_pending and fetches the next records; an ack is only ever
 * sent after the queue insert committed, so a crash re-fetches instead of losing. Everything is
 * idempotent by check_id: a batch pulled twice (ack lost) queues nothing new and emits no second event.
 */
export class AuditCollector {
  private readonly options: Required<Omit<AuditCollectorOptions, 'onQueued'>> & Pick<AuditCollectorOptions, 'onQueued'>;
  /** Committed but not yet acknowledged at the edge. */
  private unacknowledged: string[] = [];
  private failures = 0;
  private reachedEdge = false;

  constructor(options: AuditCollectorOptions) {
    this.options = { fetch: globalThis.fetch, batchSize: 200, requestTimeoutMs: 10_000, retryBaseMs: 500, retryMaxMs: 30_000, ...options };
  }

  /** One pull: ack, fetch, queue. `busy` when the edge may hold more. */
  async collectOnce(): Promise<RoundOutcome> {
    const ack = this.unacknowledged;
    let records: EdgeAuditRecord[];
    try {
      records = await this.pull({ ack, limit: this.options.batchSize });
    } catch (error) {
      const delay = Math.min(this.options.retryMaxMs, this.options.retryBaseMs * 2 ** this.failures++);
      this.options.log.warn({ err: error, retry_in_ms: delay }, 'audit pull failed; will retry');
      return { waitMs: delay };
    }
    this.failures = 0;
    if (!this.reachedEdge) {
      this.reachedEdge = true;
      this.options.log.info('audit collector reached the edge');
    }
    // The edge has dropped what we acknowledged; the rest comes back until acknowledged.
    this.unacknowledged = [];
    if (records.length === 0) return 'idle';
    await this.queue(records);
    this.unacknowledged = records.map((record) => record.check_id);
    this.options.onQueued?.();
    return 'busy';
  }

  /** Sends the last acknowledgement, so a clean stop leaves nothing for the edge to send again. */
  async flushAcknowledgements(): Promise<void> {
    if (this.unacknowledged.length === 0) return;
    try {
      await this.pull({ ack: this.unacknowledged, limit: 1 });
      this.unacknowledged = [];
    } catch (error) {
      this.options.log.warn({ err: error }, 'final audit acknowledgement failed; the edge will send those records again');
    }
  }

  private async queue(records: EdgeAuditRecord[]): Promise<void> {
    const { db, clock } = this.options;
    await db.transaction(async (tx) => {
      await lockCollector(tx);
      const known = await knownCheckIds(
        tx,
        records.map((record) => record.check_id.toLowerCase()),
      );
      const firstPulled = records.filter((record) => !known.has(record.check_id.toLowerCase()));
      await queueAuditRecords(tx, records, clock.now());
      await registerMarks(tx, records);
      await emitBlockedEvents(tx, firstPulled);
    });
  }

  private async pull(request: AuditPullRequest): Promise<EdgeAuditRecord[]> {
    const { edge, fetch, clock, requestTimeoutMs } = this.options;
    const call = { edge, fetch, clock, timeoutMs: requestTimeoutMs };
    const answer = await callEdge(
      call,
      INTERNAL_AUDIT_PULL_PATH,
      JSON.stringify(request),
      auditPullResponseSchema,
      'an audit pull response',
    );
    return answer.records;
  }
}
