import {
  checkpointText,
  formatTlogProof,
  HASH_SIZE,
  type HeldAuditRecord,
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
import { inclusionRanges, TileHashes, type TileKey, tileKey, tilesForRanges } from './merkle.js';
import * as store from './store.js';
import * as tlogStore from './tlog-store.js';

/**
 * Whose a check is that the edge decided and the origin has not collected yet; null when the edge
 * holds none. The audit declares what it asks; the edge link answers it (edge-link/audit-lookup.ts).
 */
export type EdgeAuditLookup = (checkId: string) => Promise<HeldAuditRecord | null>;

export interface TransparencyLogDeps {
  db: Database;
  clock: Clock;
  /** The audit checkpoint key signs the log's checkpoints too. */
  checkpoints: CheckpointSigner;
  /** The checkpoints' origin line, also the signed-note key name. */
  origin: string;
  /** Asks the edge whether it holds a check not collected yet; absent without an edge (EDGE_URL). */
  edgeAudit?: EdgeAuditLookup;
}

/** Full tiles kept in memory (8 KiB each): they never change, and tile fetches and proofs read the same few again and again. */
const FULL_TILE_CACHE = 2_048;

/**
 * The audit chain's entries as a transparency log: C2SP checkpoints signed over the Merkle tree the
 * appender keeps (appender.ts), the tree's tiles, and receipts (tlog-proof) for single entries.
 */
export class TransparencyLog {
  private readonly keyId: Promise<Uint8Array>;
  private readonly fullTiles = new Map<string, Buffer>();

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
    const stored = (await this.readTiles([{ level, index }])).get(tileKey(level, index));
    if (!stored || stored.length < width * HASH_SIZE) {
      const what = width === TILE_WIDTH ? 'full tile' : `tile of width ${width}`;
      throw new ProblemError('not_found', `The tree has no ${what} at level ${level}, index ${index} (yet).`);
    }
    return stored.subarray(0, width * HASH_SIZE);
  }

  /**
   * Whether a checkpoint someone holds (from a receipt) is one this log signed or could have: its
   * size is within the newest signed checkpoint's and its root is the root of the stored tree at
   * that size, so the newest checkpoint extends it.
   */
  async consistentWith(size: number, rootHash: Uint8Array): Promise<boolean> {
    const { signedSize } = await tlogStore.tlogState(this.deps.db);
    if (size < 1 || size > signedSize) return false;
    const tree = new TileHashes(await this.readTiles(tilesForRanges([[0, size]])));
    return tree.range(0, size).equals(rootHash);
  }

  /** RFC 6962 inclusion path of leaf `index` in the tree of `size`, from the few tiles it touches. */
  async inclusionProof(index: number, size: number): Promise<Buffer[]> {
    return new TileHashes(await this.readTiles(tilesForRanges(inclusionRanges(index, size)))).inclusionProof(index, size);
  }

  /** Tiles for serving and proofs: full ones from memory when read before (signing reads the table itself). */
  private async readTiles(keys: readonly TileKey[]): Promise<Map<string, Buffer>> {
    const found = new Map<string, Buffer>();
    const missing = keys.filter((key) => {
      const cached = this.fullTiles.get(tileKey(key.level, key.index));
      if (cached) found.set(tileKey(key.level, key.index), cached);
      return !cached;
    });
    for (const [key, tile] of await tlogStore.readTiles(this.deps.db, missing)) {
      found.set(key, tile);
      if (tile.length < TILE_WIDTH * HASH_SIZE) continue;
      if (this.fullTiles.size >= FULL_TILE_CACHE) this.fullTiles.delete(this.fullTiles.keys().next().value!);
      this.fullTiles.set(key, tile);
    }
    return found;
  }

  /**
   * The receipt of one entry, with the same visibility as the entry in the audit log: its leaf (the
   * canonical JSON the chain hashes), its index, and a tlog-proof against the newest checkpoint.
   */
  async receipt(reader: store.AuditReader, checkId: string) {
    const { db } = this.deps;
    const chained = () => store.listEntries(db, reader, { checkId }, 'seq', undefined, 1).then(([entry]) => entry);
    let entry = await chained();
    if (!entry) {
      // Asked in the order a record travels (edge, queue, chain), so one on its way is seen at one of them.
      if (await this.heldAtEdgeFor(reader, checkId)) {
        throw receiptPending('The gate decided this check; the audit chain has not collected it yet.');
      }
      if (await store.pendingVisibleTo(db, reader, checkId)) throw receiptPending('The decision is queued for the audit chain.');
      entry = await chained();
      if (!entry) throw new ProblemError('not_found', 'No audit entry with this check_id is visible to this caller.');
    }
    const index = entry.seq - 1;
    const state = await tlogStore.tlogState(db);
    if (!state.signedNote || state.signedSize <= index) throw receiptPending('No signed checkpoint covers the entry yet.');
    const path = await this.inclusionProof(index, state.signedSize);
    return {
      check_id: JSON.parse(entry.entryJson).check_id as string,
      index,
      leaf: entry.entryJson,
      proof: formatTlogProof({ index, path, checkpoint: state.signedNote }),
    };
  }

  /** Whether the edge holds `checkId`, not collected yet, as a record `reader` will see: others' checks stay unknown. */
  private async heldAtEdgeFor(reader: store.AuditReader, checkId: string): Promise<boolean> {
    const { edgeAudit } = this.deps;
    if (!edgeAudit) return false;
    let held: Awaited<ReturnType<EdgeAuditLookup>>;
    try {
      held = await edgeAudit(checkId.toLowerCase());
    } catch {
      // Not knowing is not "no such check": the caller asks again.
      throw new ProblemError('unavailable', 'The gate could not be asked whether it decided this check. Ask again after Retry-After.', {
        headers: { 'retry-after': String(RECEIPT_RETRY_AFTER_SECONDS) },
      });
    }
    return held !== null && (await store.heldRecordVisibleTo(this.deps.db, reader, held));
  }
}

const receiptPending = (detail: string) =>
  new ProblemError('receipt_pending', `${detail} Ask again after Retry-After.`, {
    headers: { 'retry-after': String(RECEIPT_RETRY_AFTER_SECONDS) },
  });
