import type { SyncUpdate } from '@vip/shared-schema';
import { and, asc, inArray, isNull, lte, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { edgeOutbox } from '../db/schema.js';

/** An update as stored: the version is the row id, assigned by the insert. */
export type UnversionedUpdate = SyncUpdate extends infer U ? (U extends SyncUpdate ? Omit<U, 'version'> : never) : never;

/**
 * Call inside the transaction that makes the change, after it has locked or written the entity's
 * row: then two changes of one entity get ids in commit order, and the id is a valid version.
 */
export async function enqueueEdgeUpdate(db: Executor, update: UnversionedUpdate, now: Date): Promise<number> {
  const entityKey = update.kind === 'api_key' ? update.key_hash : update.voice_id;
  const [row] = await db
    .insert(edgeOutbox)
    .values({ kind: update.kind, entityKey, payload: update, createdAt: now, nextAttemptAt: now })
    .returning({ id: edgeOutbox.id });
  return row!.id;
}

export interface ClaimedUpdate {
  id: number;
  attempts: number;
  payload: UnversionedUpdate;
}

/**
 * Claims due rows by pushing their next attempt to `leaseUntil` in one statement, so two senders
 * (two origin processes) never send the same rows at once, and a sender that dies mid-send only
 * delays its rows until the lease ends. No transaction stays open while the HTTP call runs.
 */
export async function claimDueUpdates(db: Executor, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedUpdate[]> {
  const due = db
    .select({ id: edgeOutbox.id })
    .from(edgeOutbox)
    .where(and(isNull(edgeOutbox.deliveredAt), lte(edgeOutbox.nextAttemptAt, now)))
    .orderBy(asc(edgeOutbox.id))
    .limit(limit)
    .for('update', { skipLocked: true });
  const rows = await db
    .update(edgeOutbox)
    .set({ nextAttemptAt: leaseUntil })
    .where(inArray(edgeOutbox.id, due))
    .returning({ id: edgeOutbox.id, attempts: edgeOutbox.attempts, payload: edgeOutbox.payload });
  return rows.map((row) => ({ ...row, payload: row.payload as UnversionedUpdate })).sort((a, b) => a.id - b.id);
}

export async function markDelivered(db: Executor, ids: number[], now: Date): Promise<void> {
  await db.update(edgeOutbox).set({ deliveredAt: now, lastError: null }).where(inArray(edgeOutbox.id, ids));
}

export async function markFailed(db: Executor, ids: number[], retryAt: Date, error: string): Promise<void> {
  await db
    .update(edgeOutbox)
    .set({ attempts: sql`${edgeOutbox.attempts} + 1`, nextAttemptAt: retryAt, lastError: error.slice(0, 500) })
    .where(inArray(edgeOutbox.id, ids));
}
