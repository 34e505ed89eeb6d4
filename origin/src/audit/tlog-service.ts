import {
  checkpointText,
  formatTlogProof,
  HASH_SIZE,
  noteKeyId,
  noteSignatureLine,
  noteVerifierKey,
  ProblemError,
  RECEIPT_RETRY_AFTER_SECONDS,
  TILE_WIDTH,
  type TileAddress,
} from '@vip/shared-schema';
import type { Database } from '../db/client.js';
import type { Clock } from '../runtime.js';
import type { CheckpointSigner } from './checkpoints.js';
import { inclusionRanges, TileHashes, tilesForRanges } from './merkle.js';
import * as store from './store.js';
import * as tlogStore from './tlog-store.js';

export interface TransparencyLogDeps {
  db: Database;
  clock: Clock;
  /** The audit checkpoint key signs the log's checkpoints too. */
  checkpoints: CheckpointSigner;
  /** The checkpoints' origin line, also the signed-note key name. */
  origin: string;
}

/**
 * The audit chain's entries as a transparency log: C2SP checkpoints signed over the Merkle tree the
 * appender keeps (appender.ts), the tree's tiles, and receipts (tlog-proof) for single entries.
 */
export class TransparencyLog {
  private readonly keyId: Promise<Uint8Array>;

  constructor(private readonly deps: TransparencyLogDeps) {
    this.keyId = noteKeyId(deps.origin, deps.checkpoints.publicKey);
  }

  verifierKey(): Promise<string> {
    return noteVerifierKey(this.deps.origin, this.deps.checkpoints.publicKey);
  }

  /**
   * Signs a checkpoint of the tree as it stands, if it grew since the last one. Before signing, the
   * stored tiles must give both the root the appender recorded and the root of the last signed
   * checkpoint: then the new tree extends the old one, and the service never signs two checkpoints
   * that are inconsistent. Under an advisory lock, so origin processes sign one after another.
   */
  async signCheckpoint(): Promise<boolean> {
    const { db, clock, checkpoints, origin } = this.deps;
    return db.transaction(async (tx) => {
      await tlogStore.lockCheckpointer(tx);
      const state = await tlogStore.tlogState(tx);
      if (state.treeSize <= state.signedSize) return false;
      const sizes = state.signedSize > 0 ? [state.treeSize, state.signedSize] : [state.treeSize];
      const tree = new TileHashes(await tlogStore.readTiles(tx, tilesForRanges(sizes.map((size) => [0, size]))));
      if (!tree.range(0, state.treeSize).equals(state.rootHash)) {
        throw new Error(`the stored tiles do not give the recorded root of the tree of ${state.treeSize}: not signing`);
      }
      if (state.signedRoot && !tree.range(0, state.signedSize).equals(state.signedRoot)) {
        throw new Error(`the tree of ${state.treeSize} does not extend the signed tree of ${state.signedSize}: not signing`);
      }
      const text = checkpointText({ origin, size: state.treeSize, rootHash: state.rootHash });
      const signature = checkpoints.signRaw(new TextEncoder().encode(text));
      const note = `${text}\n${noteSignatureLine(origin, await this.keyId, signature)}`;
      return tlogStore.recordCheckpoint(tx, { size: state.treeSize, root: state.rootHash, note, signedAt: clock.now() });
    });
  }

  async latestCheckpoint(): Promise<string> {
    const { signedNote } = await tlogStore.tlogState(this.deps.db);
    if (!signedNote) throw new ProblemError('not_found', 'No transparency-log checkpoint has been signed yet.');
    return signedNote;
  }

  /** A tile's hashes: a partial tile of any width the tree has reached, a full tile once it holds 256. */
  async tile({ level, index, width }: TileAddress): Promise<Buffer> {
    const stored = (await tlogStore.readTiles(this.deps.db, [{ level, index }])).get(`${level}/${index}`);
    if (!stored || stored.length < width * HASH_SIZE) {
      const what = width === TILE_WIDTH ? 'full tile' : `tile of width ${width}`;
      throw new ProblemError('not_found', `The tree has no ${what} at level ${level}, index ${index} (yet).`);
    }
    return stored.subarray(0, width * HASH_SIZE);
  }

  /**
   * The receipt of one entry, with the same visibility as the entry in the audit log: its leaf (the
   * canonical JSON the chain hashes), its index, and a tlog-proof against the newest checkpoint.
   */
  async receipt(reader: store.AuditReader, checkId: string) {
    const { db } = this.deps;
    const [entry] = await store.listEntries(db, reader, { checkId }, 1);
    if (!entry) {
      if (await store.pendingVisibleTo(db, reader, checkId)) throw receiptPending('The decision is queued for the audit chain.');
      throw new ProblemError('not_found', 'No audit entry with this check_id is visible to this caller.');
    }
    const index = entry.seq - 1;
    const state = await tlogStore.tlogState(db);
    if (!state.signedNote || state.signedSize <= index) throw receiptPending('No signed checkpoint covers the entry yet.');
    const tiles = await tlogStore.readTiles(db, tilesForRanges(inclusionRanges(index, state.signedSize)));
    const path = new TileHashes(tiles).inclusionProof(index, state.signedSize);
    return {
      check_id: JSON.parse(entry.entryJson).check_id as string,
      index,
      leaf: entry.entryJson,
      proof: formatTlogProof({ index, path, checkpoint: state.signedNote }),
    };
  }
}

const receiptPending = (detail: string) =>
  new ProblemError('receipt_pending', `${detail} Ask again after Retry-After.`, {
    headers: { 'retry-after': String(RECEIPT_RETRY_AFTER_SECONDS) },
  });
