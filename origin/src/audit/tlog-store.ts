import { and, asc, eq, gte, lt, lte, or, sql } from 'drizzle-orm';
import { waitForTurn } from '../db/advisory-locks.js';
import type { Executor } from '../db/client.js';
import { auditEntries, auditTlogState, auditTlogTiles, type TlogState } from '../db/schema.js';
import { type TileKey, tileKey } from './merkle.js';

export async function lockCheckpointer(db: Executor): Promise<void> {
  await waitForTurn(db, 'checkpointSigning');
}

export async function tlogState(db: Executor): Promise<TlogState> {
  const [state] = await db.select().from(auditTlogState);
  if (!state) throw new Error('audit_tlog_state has no row: migration 0010 did not run');
  return state;
}

export async function setTreeHead(db: Executor, treeSize: number, rootHash: Buffer): Promise<void> {
  await db.update(auditTlogState).set({ treeSize, rootHash });
}

/** Records a signed checkpoint unless a larger one was recorded meanwhile; true when it was. */
export async function recordCheckpoint(
  db: Executor,
  checkpoint: { size: number; root: Buffer; note: string; signedAt: Date },
): Promise<boolean> {
  const updated = await db
    .update(auditTlogState)
    .set({ signedSize: checkpoint.size, signedRoot: checkpoint.root, signedNote: checkpoint.note, signedAt: checkpoint.signedAt })
    .where(lt(auditTlogState.signedSize, checkpoint.size))
    .returning({ size: auditTlogState.signedSize });
  return updated.length > 0;
}

/** The tiles asked for that exist, by tileKey; each as stored (a partial tile holds fewer than 256 hashes). */
export async function readTiles(db: Executor, keys: readonly TileKey[]): Promise<Map<string, Buffer>> {
  if (keys.length === 0) return new Map();
  const rows = await db
    .select()
    .from(auditTlogTiles)
    .where(or(...keys.map((key) => and(eq(auditTlogTiles.level, key.level), eq(auditTlogTiles.index, key.index)))));
  return new Map(rows.map((row) => [tileKey(row.level, row.index), row.hashes]));
}

export async function writeTiles(db: Executor, tiles: Iterable<{ level: number; index: number; hashes: Buffer }>): Promise<void> {
  const values = [...tiles];
  if (values.length === 0) return;
  await db
    .insert(auditTlogTiles)
    .values(values)
    .onConflictDoUpdate({ target: [auditTlogTiles.level, auditTlogTiles.index], set: { hashes: sql`excluded.hashes` } });
}

/** entry_json of the entries with `fromSeq <= seq <= toSeq`, in seq order: the leaves of that stretch of the tree. */
export async function entryJsonsBetween(db: Executor, fromSeq: number, toSeq: number): Promise<string[]> {
  const rows = await db
    .select({ entryJson: auditEntries.entryJson })
    .from(auditEntries)
    .where(and(gte(auditEntries.seq, fromSeq), lte(auditEntries.seq, toSeq)))
    .orderBy(asc(auditEntries.seq));
  return rows.map((row) => row.entryJson);
}
