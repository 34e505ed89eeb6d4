import { createHash } from 'node:crypto';
import { rfc6962LeafHash, rootFromInclusionProof, TILE_WIDTH } from '@vip/shared-schema';
import { describe, expect, it } from 'vitest';
import { appendLeaves, EMPTY_TREE_ROOT, edgeTiles, inclusionRanges, leafHash, TileHashes, tileKey } from './merkle.js';

/** RFC 6962 2.1 written out as the RFC states it, recursion and all: what the tiles must agree with. */
function referenceRoot(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return createHash('sha256').digest();
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return createHash('sha256')
    .update(Buffer.from([1]))
    .update(referenceRoot(leaves.slice(0, k)))
    .update(referenceRoot(leaves.slice(k)))
    .digest();
}

function referencePath(index: number, leaves: readonly Buffer[]): Buffer[] {
  if (leaves.length <= 1) return [];
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return index < k
    ? [...referencePath(index, leaves.slice(0, k)), referenceRoot(leaves.slice(k))]
    : [...referencePath(index - k, leaves.slice(k)), referenceRoot(leaves.slice(0, k))];
}

const leavesOf = (count: number, from = 0) => Array.from({ length: count }, (_, i) => leafHash(`{"seq":${from + i + 1}}`));

/** Grows a tree batch by batch as the appender does, carrying only the edge tiles between batches. */
function grow(batches: readonly number[]) {
  const stored = new Map<string, Uint8Array>();
  let size = 0;
  const roots: Buffer[] = [];
  for (const count of batches) {
    const edge = new Map(edgeTiles(size).map(({ level, index }) => [tileKey(level, index), stored.get(tileKey(level, index))!]));
    const { written, root } = appendLeaves(edge, size, leavesOf(count, size));
    for (const [key, tile] of written) stored.set(key, Buffer.from(tile.hashes));
    size += count;
    roots.push(root);
  }
  return { stored, size, roots };
}

describe('Merkle tree as tiles', () => {
  it('hashes a leaf behind 0x00 and gives the empty tree the hash of nothing', async () => {
    expect(leafHash('abc')).toEqual(Buffer.from(await rfc6962LeafHash('abc')));
    expect(EMPTY_TREE_ROOT.toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('gives the RFC 6962 root after every batch, across tile and level boundaries', () => {
    const batches = [1, 1, 3, 250, 1, 255, 256, 512, 7, 65_536 - 1_286, 1, 300];
    const { roots, size } = grow(batches);
    const all = leavesOf(size);
    let at = 0;
    batches.forEach((count, i) => {
      at += count;
      expect(roots[i]!.equals(referenceRoot(all.slice(0, at))), `root after ${at} leaves`).toBe(true);
    });
  });

  it('stores full tiles of 256 hashes and one partial tile per level, as tlog-tiles lays them out', () => {
    const { stored, size } = grow([70_000]);
    expect(size).toBe(70_000);
    const widths = [...stored].map(([key, tile]) => [key, tile.length / 32]);
    // 273 full level-0 tiles and one of 112; one full level-1 tile and one of 17; one level-2 tile of 1.
    expect(widths.filter(([key]) => String(key).startsWith('0/'))).toHaveLength(274);
    expect(Object.fromEntries(widths.filter(([, width]) => width !== TILE_WIDTH))).toEqual({ '0/273': 112, '1/1': 17, '2/0': 1 });
    expect(stored.get('1/0')!.length).toBe(TILE_WIDTH * 32);
  });

  it('proves inclusion as RFC 6962 does, for every leaf of trees of many shapes, and the proof verifies', async () => {
    const { stored } = grow([1_000]);
    const tree = new TileHashes(stored);
    const all = leavesOf(1_000);
    for (const size of [1, 2, 3, 7, 8, 255, 256, 257, 511, 1_000]) {
      for (const index of new Set([0, 1, Math.floor(size / 2), size - 2, size - 1].filter((i) => i >= 0 && i < size))) {
        const path = tree.inclusionProof(index, size);
        expect(path, `leaf ${index} of ${size}`).toEqual(referencePath(index, all.slice(0, size)));
        const root = await rootFromInclusionProof(index, size, all[index]!, path);
        expect(Buffer.from(root).equals(tree.range(0, size))).toBe(true);
      }
    }
  });

  it('names the proof ranges from the sibling up, each once', () => {
    expect(inclusionRanges(0, 1)).toEqual([]);
    expect(inclusionRanges(2, 5)).toEqual([
      [3, 4],
      [0, 2],
      [4, 5],
    ]);
    expect(inclusionRanges(4, 5)).toEqual([[0, 4]]);
  });

  it('refuses to compute a node from a tile it was not given', () => {
    const { stored } = grow([300]);
    stored.delete('0/1');
    expect(() => new TileHashes(stored).range(0, 300)).toThrow(/tile 0\/1/);
  });
});
