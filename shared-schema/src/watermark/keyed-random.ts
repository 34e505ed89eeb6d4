/**
 * The watermark's keyed pseudo-random choices (where the interleaver's pattern starts in time and
 * band, the dither of each pair's lattice, the whitening of the coded bits): xoshiro128** seeded from the key and a
 * purpose label by a 32-bit FNV-1a/murmur mix. Not a cryptographic generator, and it need not be:
 * the detection key is public (docs/WATERMARK.md, "Who holds what"); what the key buys is that marks
 * made under another key, or structure in unmarked audio, do not line up with ours.
 */
export class KeyedRandom {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(key: string, purpose: string) {
    const bytes = new TextEncoder().encode(`${key}\u0000${purpose}`);
    const seeds = [0x811c9dc5, 0x01000193, 0x9e3779b9, 0x85ebca6b].map((seed) => {
      let hash = seed >>> 0;
      for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
      return mix32(hash);
    });
    [this.s0, this.s1, this.s2, this.s3] = seeds as [number, number, number, number];
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
    for (let i = 0; i < 8; i++) this.nextUint32();
  }

  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  nextUnit(): number {
    return this.nextUint32() / 2 ** 32;
  }

  /** Uniform integer in [0, bound). */
  nextBelow(bound: number): number {
    return Math.floor(this.nextUnit() * bound);
  }
}

function rotl(value: number, shift: number): number {
  return ((value << shift) | (value >>> (32 - shift))) >>> 0;
}

/** murmur3's 32-bit finalizer. */
function mix32(value: number): number {
  let h = value >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
