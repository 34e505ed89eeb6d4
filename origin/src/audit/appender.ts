import type { Database, Executor } from '../db/client.js';
import type { Clock } from '../runtime.js';
import { chainEntry } from './entries.js';
import { appendLeaves, edgeTiles, leafHash } from './merkle.js';
import * as store from './store.js';
import * as tlogStore from './tlog-store.js';

/** Entries added to the Merkle tree per round while it catches up with a chain older than the tree (migration 0010). */
const TREE_CATCH_UP_BATCH = 10_000;

export interface AppendOutcome {
  appended: number;
  drained: number;
  /** Entries chained before the tree existed, added to it this round instead of appending. */
  addedToTree: number;
}

/**
 * Moves queued decisions (audit_pending) into the chain and their entries into the Merkle tree.
 * Each batch runs in one transaction under the chain's advisory lock, so appenders in several
 * origin processes take turns, the chain stays one gapless sequence and the tree always holds
 * exactly the chain's entries; a check_id already chained (a repeated delivery) is dropped from the
 * queue.
 */
export async function appendPendingBatch(db: Database, clock: Clock, batchSize: number): Promise<AppendOutcome> {
  return db.transaction(async (tx) => {
    await store.lockChain(tx);
    let { seq, entryHash } = await store.chainHead(tx);
    const { treeSize } = await tlogStore.tlogState(tx);
    if (treeSize > seq) {
      // Entries were removed from the chain's end: appending would give new entries positions the
      // tree has already published. verify names the break; an operator restores the entries.
      throw new Error(`the Merkle tree holds ${treeSize} entries but the chain ends at seq ${seq}: refusing to append`);
    }
    if (treeSize < seq) {
      const upTo = Math.min(seq, treeSize + TREE_CATCH_UP_BATCH);
      await extendTree(tx, treeSize, await tlogStore.entryJsonsBetween(tx, treeSize + 1, upTo));
      return { appended: 0, drained: 0, addedToTree: upTo - treeSize };
    }
    const pending = await store.oldestPending(tx, batchSize);
    if (pending.length === 0) return { appended: 0, drained: 0, addedToTree: 0 };
    const checkIds = pending.map((row) => row.checkId);
    const chained = await store.chainedCheckIds(tx, checkIds);
    const treeSizeBefore = seq;
    const recordedAt = clock.now();
    const entries = [];
    for (const { checkId, record } of pending) {
      if (chained.has(checkId)) continue;
      const entry = chainEntry(record, ++seq, recordedAt, entryHash);
      entryHash = entry.entryHash;
      entries.push(entry);
    }
    await store.insertEntries(tx, entries);
    await extendTree(
      tx,
      treeSizeBefore,
      entries.map((entry) => entry.entryJson),
    );
    await store.deletePending(tx, checkIds);
    return { appended: entries.length, drained: pending.length, addedToTree: 0 };
  });
}

/** Adds entries (their canonical JSON, the leaf bytes) to a tree of `size` leaves, in seq order. */
export async function extendTree(tx: Executor, size: number, entryJsons: readonly string[]): Promise<void> {
  if (entryJsons.length === 0) return;
  const tiles = await tlogStore.readTiles(tx, edgeTiles(size));
  const { written, root } = appendLeaves(tiles, size, entryJsons.map(leafHash));
  await tlogStore.writeTiles(tx, written.values());
  await tlogStore.setTreeHead(tx, size + entryJsons.length, root);
}
