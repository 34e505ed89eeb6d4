import { type AuditPullRequest, type AuditRecord, auditPullResponseSchema, INTERNAL_AUDIT_PULL_PATH } from '@vip/shared-schema';
import { inArray } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { queueAuditRecords } from '../audit/queue.js';
import { knownCheckIds, lockCollector } from '../audit/store.js';
import type { Database, Executor } from '../db/client.js';
import { voices } from '../db/schema.js';
import { callEdge } from '../edge-sync/edge-call.js';
import { recordEvent } from '../events/store.js';
import type { Clock } from '../runtime.js';
import type { RoundOutcome } from './background-loop.js';

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

  constructor(options: AuditCollectorOptions) {
    this.options = { fetch: globalThis.fetch, batchSize: 200, requestTimeoutMs: 10_000, retryBaseMs: 500, retryMaxMs: 30_000, ...options };
  }

  /** One pull: ack, fetch, queue. `busy` when the edge may hold more. */
  async collectOnce(): Promise<RoundOutcome> {
    const ack = this.unacknowledged;
    let records: AuditRecord[];
    try {
      records = await this.pull({ ack, limit: this.options.batchSize });
    } catch (error) {
      const delay = Math.min(this.options.retryMaxMs, this.options.retryBaseMs * 2 ** this.failures++);
      this.options.log.warn({ err: error, retry_in_ms: delay }, 'audit pull failed; will retry');
      return { waitMs: delay };
    }
    this.failures = 0;
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

  private async queue(records: AuditRecord[]): Promise<void> {
    const { db, clock } = this.options;
    await db.transaction(async (tx) => {
      await lockCollector(tx);
      const known = await knownCheckIds(
        tx,
        records.map((record) => record.check_id.toLowerCase()),
      );
      const denials = records.filter(
        (record) => record.kind === 'gate.decision' && record.decision === 'deny' && !known.has(record.check_id.toLowerCase()),
      );
      await queueAuditRecords(tx, records, clock.now());
      await emitBlockedEvents(tx, denials);
    });
  }

  private async pull(request: AuditPullRequest): Promise<AuditRecord[]> {
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

/** docs/CONTRACT.md#events: `pre_synthesis.blocked` on every hard block, for the voice owner's subscriptions. */
async function emitBlockedEvents(tx: Executor, denials: AuditRecord[]): Promise<void> {
  if (denials.length === 0) return;
  const voiceIds = [...new Set(denials.flatMap((record) => (record.voice_id ? [record.voice_id.toLowerCase()] : [])))];
  const owners = new Map(
    voiceIds.length === 0
      ? []
      : (await tx.select({ id: voices.id, ownerId: voices.ownerId }).from(voices).where(inArray(voices.id, voiceIds))).map((row) => [
          row.id,
          row.ownerId,
        ]),
  );
  for (const record of denials) {
    await recordEvent(
      tx,
      {
        type: 'pre_synthesis.blocked',
        voiceId: record.voice_id,
        ownerId: (record.voice_id && owners.get(record.voice_id.toLowerCase())) ?? null,
        fields: {
          platform_name: record.platform_name,
          intended_use: record.intended_use,
          reason: record.reason,
          check_id: record.check_id,
          authorization_denied: true,
        },
      },
      new Date(record.decided_at),
    );
  }
}
