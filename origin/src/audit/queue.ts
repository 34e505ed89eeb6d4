import type { EdgeAuditRecord } from '@vip/shared-schema';
import type { Executor } from '../db/client.js';
import { auditPending } from '../db/schema.js';

/**
 * Queues decisions for the audit chain. Call it inside the transaction that makes an origin-side
 * decision, so the decision and its audit record commit together; the edge collector calls it for
 * records it pulled. A record already queued under the same check_id is ignored here, and the
 * appender skips one already in the chain, so a repeated delivery adds nothing.
 *
 * What the edge hands over beside a record (a redemption's watermark id, which the collector
 * registers with the provenance domain) is left out: the chain entry, whose leaves are public, never
 * carries it.
 */
export async function queueAuditRecords(db: Executor, records: readonly EdgeAuditRecord[], now: Date): Promise<void> {
  if (records.length === 0) return;
  await db
    .insert(auditPending)
    .values(records.map(({ watermark_id: _notChained, ...record }) => ({ checkId: record.check_id, record, receivedAt: now })))
    .onConflictDoNothing();
}
