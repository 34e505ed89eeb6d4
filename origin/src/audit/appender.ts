import type { Database } from '../db/client.js';
import type { Clock } from '../runtime.js';
import { chainEntry } from './entries.js';
import * as store from './store.js';

/**
 * Moves queued decisions (audit_pending) into the chain. Each batch runs in one transaction under
 * the chain's advisory lock, so appenders in several origin processes take turns and the chain stays
 * one gapless sequence; a check_id already chained (a repeated delivery) is dropped from the queue.
 * Returns how many entries were appended.
 */
export async function appendPendingBatch(db: Database, clock: Clock, batchSize: number): Promise<{ appended: number; drained: number }> {
  return db.transaction(async (tx) => {
    await store.lockChain(tx);
    const pending = await store.oldestPending(tx, batchSize);
    if (pending.length === 0) return { appended: 0, drained: 0 };
    const checkIds = pending.map((row) => row.checkId);
    const chained = await store.chainedCheckIds(tx, checkIds);
    let { seq, entryHash } = await store.chainHead(tx);
    const recordedAt = clock.now();
    const entries = [];
    for (const { checkId, record } of pending) {
      if (chained.has(checkId)) continue;
      const entry = chainEntry(record, ++seq, recordedAt, entryHash);
      entryHash = entry.entryHash;
      entries.push(entry);
    }
    await store.insertEntries(tx, entries);
    await store.deletePending(tx, checkIds);
    return { appended: entries.length, drained: pending.length };
  });
}
