import { hash } from 'node:crypto';
import { HASH_SIZE, TILE_HEIGHT, TILE_WIDTH } from '@vip/shared-schema';

/**
 * The audit log's Merkle tree (RFC 6962) kept as tlog-tiles: tile (L, N) holds the hashes of tree
 * level 8L, nodes 256N to 256N+255 (a level-8L node covers 256^L leaves). Those are all the tree
 * stores; a node between two tile levels is recomputed from at most 128 hashes of one tile. Node's
 * one-shot SHA-256 keeps appending synchronous and cheap.
 */

const LEAF_PREFIX = Buffer.from([0]);
const NODE_PREFIX = Buffer.from([1]);
const TILE_BYTES = TILE_WIDTH * HASH_SIZE;

export const leafHash = (leaf: string): Buffer => hash('sha256', Buffer.concat([LEAF_PREFIX, Buffer.from(leaf)]), 'buffer');
const nodeHash = (left: Uint8Array, right: Uint8Array): Buffer => hash('sha256', Buffer.concat([NODE_PREFIX, left, right]), 'buffer');
/** MTH of the empty tree (RFC 6962 2.1): the hash of no bytes. */
export const EMPTY_TREE_ROOT: Buffer = hash('sha256', Buffer.alloc(0), 'buffer');

/** A complete subtree: 2^level leaves starting at leaf index * 2^level. */
export interface TreeNode {
  level: number;
  index: number;
}

export interface TileKey {
  level: number;
  index: number;
}

export const tileKey = (level: number, index: number): string => `${level}/${index}`;

/** Powers of two above 2^31 are beyond bit operators, so the arithmetic here is plain. */
const largestPowerOfTwoAtMost = (n: number): number => {
  let power = 1;
  while (power * 2 <= n) power *= 2;
  return power;
};

/**
 * [start, end) as the complete subtrees RFC 6962's MTH splits it into, left to right (start is a
 * multiple of the first one's size in every range a tree or a proof asks for).
 */
function rangeNodes(start: number, end: number): TreeNode[] {
  const nodes: TreeNode[] = [];
  for (let at = start; at < end; ) {
    const size = largestPowerOfTwoAtMost(end - at);
    nodes.push({ level: Math.log2(size), index: at / size });
    at += size;
  }
  return nodes;
}

/** The ranges whose MTH make up the inclusion proof of leaf `index` in a tree of `size` (RFC 6962 2.1.1), leaf's sibling first. */
export function inclusionRanges(index: number, size: number): [number, number][] {
  const ranges: [number, number][] = [];
  let start = 0;
  let end = size;
  while (end - start > 1) {
    const split = start + largestPowerOfTwoAtMost(end - start - 1);
    if (index < split) {
      ranges.push([split, end]);
      end = split;
    } else {
      ranges.push([start, split]);
      start = split;
    }
  }
  return ranges.reverse();
}

/** The tile that holds what `node` is computed from, and where in it. */
function placeOf(node: TreeNode) {
  const tileLevel = Math.floor(node.level / TILE_HEIGHT);
  const span = 2 ** (node.level - tileLevel * TILE_HEIGHT);
  const first = node.index * span;
  return { tileLevel, tileIndex: Math.floor(first / TILE_WIDTH), offset: first % TILE_WIDTH, span };
}

export function tilesForRanges(ranges: readonly [number, number][]): TileKey[] {
  const keys = new Map<string, TileKey>();
  for (const [start, end] of ranges) {
    for (const node of rangeNodes(start, end)) {
      const { tileLevel, tileIndex } = placeOf(node);
      keys.set(tileKey(tileLevel, tileIndex), { level: tileLevel, index: tileIndex });
    }
  }
  return [...keys.values()];
}

/** The root of a perfect tree over `count` consecutive hashes of `bytes` from hash `offset` on. */
function perfectRoot(bytes: Uint8Array, offset: number, count: number): Buffer {
  let level: Uint8Array[] = [];
  for (let i = 0; i < count; i++) level.push(bytes.subarray((offset + i) * HASH_SIZE, (offset + i + 1) * HASH_SIZE));
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(nodeHash(level[i]!, level[i + 1]!));
    level = next;
  }
  return Buffer.from(level[0]!);
}

/** Hashes of a tree read from some of its tiles (each tile's bytes, `width * 32` long). */
export class TileHashes {
  constructor(private readonly tiles: ReadonlyMap<string, Uint8Array>) {}

  node(node: TreeNode): Buffer {
    const { tileLevel, tileIndex, offset, span } = placeOf(node);
    const tile = this.tiles.get(tileKey(tileLevel, tileIndex));
    if (!tile || tile.length < (offset + span) * HASH_SIZE) {
      throw new Error(`tile ${tileLevel}/${tileIndex} does not hold node ${node.level}/${node.index}`);
    }
    return perfectRoot(tile, offset, span);
  }

  /** MTH of leaves [start, end). */
  range(start: number, end: number): Buffer {
    if (start === end) return EMPTY_TREE_ROOT;
    const nodes = rangeNodes(start, end).map((node) => this.node(node));
    let root = nodes.pop()!;
    while (nodes.length > 0) root = nodeHash(nodes.pop()!, root);
    return root;
  }

  inclusionProof(index: number, size: number): Buffer[] {
    return inclusionRanges(index, size).map(([start, end]) => this.range(start, end));
  }
}

/** The tiles a tree's root is computed from: at each level, the rightmost tile, when partial. */
export function edgeTiles(size: number): TileKey[] {
  const keys: TileKey[] = [];
  for (let level = 0, count = size; count > 0; level++, count = Math.floor(count / TILE_WIDTH)) {
    if (count % TILE_WIDTH > 0) keys.push({ level, index: Math.floor(count / TILE_WIDTH) });
  }
  return keys;
}

/**
 * Appends leaf hashes to a tree of `size` whose edge tiles (edgeTiles(size)) are in `tiles`.
 * Completed tiles are hashed into the level above. Returns the tiles written (full or partial)
 * and the new root; `tiles` ends up holding the new tree's edge.
 */
export function appendLeaves(
  tiles: Map<string, Uint8Array>,
  size: number,
  leaves: readonly Buffer[],
): { written: Map<string, { level: number; index: number; hashes: Buffer }>; root: Buffer } {
  const growing = new Map<string, { level: number; index: number; bytes: Buffer; width: number }>();
  const push = (level: number, position: number, hashValue: Uint8Array): void => {
    const index = Math.floor(position / TILE_WIDTH);
    const key = tileKey(level, index);
    let tile = growing.get(key);
    if (!tile) {
      const bytes = Buffer.alloc(TILE_BYTES);
      const existing = position % TILE_WIDTH === 0 ? undefined : tiles.get(key);
      if (position % TILE_WIDTH !== 0 && !existing) throw new Error(`edge tile ${key} is missing`);
      if (existing) bytes.set(existing);
      tile = { level, index, bytes, width: position % TILE_WIDTH };
      growing.set(key, tile);
    }
    tile.bytes.set(hashValue, tile.width * HASH_SIZE);
    tile.width++;
    if (tile.width === TILE_WIDTH) push(level + 1, index, perfectRoot(tile.bytes, 0, TILE_WIDTH));
  };
  leaves.forEach((leaf, at) => {
    push(0, size + at, leaf);
  });
  const written = new Map<string, { level: number; index: number; hashes: Buffer }>();
  for (const [key, tile] of growing) {
    const hashes = tile.bytes.subarray(0, tile.width * HASH_SIZE);
    written.set(key, { level: tile.level, index: tile.index, hashes });
    tiles.set(key, hashes);
  }
  const newSize = size + leaves.length;
  return { written, root: new TileHashes(tiles).range(0, newSize) };
}
