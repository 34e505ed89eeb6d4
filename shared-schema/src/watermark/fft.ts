/**
 * A radix-2 FFT for real signals: a complex FFT of half the length on the even/odd samples packed as
 * real/imaginary parts, then one split pass. Written for the watermark's short frames (128 to 1024
 * points); tables are built once per size and shared. Pure arithmetic: runs in Node, Workers and
 * browsers.
 */
export class RealFft {
  readonly size: number;
  private readonly half: number;
  private readonly bitReversed: Uint32Array;
  /** Twiddles of the half-length complex FFT: cos and −sin of 2πk/half. */
  private readonly cosHalf: Float64Array;
  private readonly sinHalf: Float64Array;
  /** Twiddles of the split pass: cos and −sin of 2πk/size. */
  private readonly cosFull: Float64Array;
  private readonly sinFull: Float64Array;
  private readonly workRe: Float64Array;
  private readonly workIm: Float64Array;

  private static readonly cache = new Map<number, RealFft>();

  /** The shared transform of `size` points (a power of two, at least 4). */
  static of(size: number): RealFft {
    let fft = RealFft.cache.get(size);
    if (!fft) {
      fft = new RealFft(size);
      RealFft.cache.set(size, fft);
    }
    return fft;
  }

  private constructor(size: number) {
    if (!Number.isInteger(Math.log2(size)) || size < 4) throw new RangeError(`FFT size must be a power of two ≥ 4, got ${size}`);
    this.size = size;
    const half = size / 2;
    this.half = half;
    const bits = Math.log2(half);
    this.bitReversed = new Uint32Array(half);
    for (let i = 0; i < half; i++) {
      let reversed = 0;
      for (let bit = 0, value = i; bit < bits; bit++, value >>= 1) reversed = (reversed << 1) | (value & 1);
      this.bitReversed[i] = reversed;
    }
    this.cosHalf = new Float64Array(half / 2);
    this.sinHalf = new Float64Array(half / 2);
    for (let k = 0; k < half / 2; k++) {
      this.cosHalf[k] = Math.cos((2 * Math.PI * k) / half);
      this.sinHalf[k] = -Math.sin((2 * Math.PI * k) / half);
    }
    this.cosFull = new Float64Array(half + 1);
    this.sinFull = new Float64Array(half + 1);
    for (let k = 0; k <= half; k++) {
      this.cosFull[k] = Math.cos((2 * Math.PI * k) / size);
      this.sinFull[k] = -Math.sin((2 * Math.PI * k) / size);
    }
    this.workRe = new Float64Array(half);
    this.workIm = new Float64Array(half);
  }

  /**
   * In-place complex FFT of `workRe`/`workIm` (forward, or inverse without the 1/n scale). The first
   * two stages need no multiplications and run on their own; later stages take each twiddle once for
   * all the butterflies that use it.
   */
  private complex(inverse: boolean): void {
    const re = this.workRe;
    const im = this.workIm;
    const n = this.half;
    const reversed = this.bitReversed;
    const cosTable = this.cosHalf;
    const sinTable = this.sinHalf;
    for (let i = 0; i < n; i++) {
      const j = reversed[i]!;
      if (j > i) {
        const tr = re[i]!;
        re[i] = re[j]!;
        re[j] = tr;
        const ti = im[i]!;
        im[i] = im[j]!;
        im[j] = ti;
      }
    }
    const sign = inverse ? -1 : 1;
    if (n === 2) {
      const r0 = re[0]!;
      const i0 = im[0]!;
      re[0] = r0 + re[1]!;
      im[0] = i0 + im[1]!;
      re[1] = r0 - re[1]!;
      im[1] = i0 - im[1]!;
      return;
    }
    // stages of span 1 and 2 together: twiddles 1 and ∓i
    for (let a = 0; a + 3 < n; a += 4) {
      const r0 = re[a]! + re[a + 1]!;
      const i0 = im[a]! + im[a + 1]!;
      const r1 = re[a]! - re[a + 1]!;
      const i1 = im[a]! - im[a + 1]!;
      const r2 = re[a + 2]! + re[a + 3]!;
      const i2 = im[a + 2]! + im[a + 3]!;
      const r3 = re[a + 2]! - re[a + 3]!;
      const i3 = im[a + 2]! - im[a + 3]!;
      // (r3 + i·i3)·(∓i): forward multiplies by −i
      const t3r = sign * i3;
      const t3i = -sign * r3;
      re[a] = r0 + r2;
      im[a] = i0 + i2;
      re[a + 2] = r0 - r2;
      im[a + 2] = i0 - i2;
      re[a + 1] = r1 + t3r;
      im[a + 1] = i1 + t3i;
      re[a + 3] = r1 - t3r;
      im[a + 3] = i1 - t3i;
    }
    for (let span = 4; span < n; span <<= 1) {
      const stride = n / (2 * span);
      for (let k = 0; k < span; k++) {
        const wr = cosTable[k * stride]!;
        const wi = sign * sinTable[k * stride]!;
        for (let a = k; a < n; a += 2 * span) {
          const b = a + span;
          const br = re[b]!;
          const bi = im[b]!;
          const tr = br * wr - bi * wi;
          const ti = br * wi + bi * wr;
          const ar = re[a]!;
          const ai = im[a]!;
          re[b] = ar - tr;
          im[b] = ai - ti;
          re[a] = ar + tr;
          im[a] = ai + ti;
        }
      }
    }
  }

  /**
   * Spectrum of `input` (`size` real samples): bins 0…size/2 into `outRe`/`outIm` (length size/2 + 1).
   */
  forward(input: ArrayLike<number>, outRe: Float64Array, outIm: Float64Array): void {
    const n = this.half;
    const re = this.workRe;
    const im = this.workIm;
    for (let k = 0; k < n; k++) {
      re[k] = input[2 * k]!;
      im[k] = input[2 * k + 1]!;
    }
    this.complex(false);
    for (let k = 0; k <= n; k++) {
      const k1 = k === n ? 0 : k;
      const k2 = k === 0 ? 0 : n - k;
      const zr = re[k1]!;
      const zi = im[k1]!;
      const cr = re[k2]!;
      const ci = -im[k2]!;
      // even part (Z[k] + conj Z[n−k]) / 2, odd part (Z[k] − conj Z[n−k]) / 2i
      const er = 0.5 * (zr + cr);
      const ei = 0.5 * (zi + ci);
      const or = 0.5 * (zi - ci);
      const oi = -0.5 * (zr - cr);
      const wr = this.cosFull[k]!;
      const wi = this.sinFull[k]!;
      outRe[k] = er + (or * wr - oi * wi);
      outIm[k] = ei + (or * wi + oi * wr);
    }
  }

  /** Real signal (`size` samples, scaled by 1/size) of the half spectrum `re`/`im` (bins 0…size/2). */
  inverse(re: Float64Array, im: Float64Array, output: Float64Array): void {
    const n = this.half;
    const wre = this.workRe;
    const wim = this.workIm;
    for (let k = 0; k < n; k++) {
      // X[k + n] = conj X[n − k] for a real signal
      const ar = re[k]!;
      const ai = im[k]!;
      const br = re[n - k]!;
      const bi = -im[n - k]!;
      const er = 0.5 * (ar + br);
      const ei = 0.5 * (ai + bi);
      const dr = 0.5 * (ar - br);
      const di = 0.5 * (ai - bi);
      // odd part times e^{+2πik/size}
      const wr = this.cosFull[k]!;
      const wi = -this.sinFull[k]!;
      const or = dr * wr - di * wi;
      const oi = dr * wi + di * wr;
      wre[k] = er - oi;
      wim[k] = ei + or;
    }
    this.complex(true);
    const scale = 1 / n;
    for (let k = 0; k < n; k++) {
      output[2 * k] = wre[k]! * scale;
      output[2 * k + 1] = wim[k]! * scale;
    }
  }
}
