import { readFileSync } from 'node:fs';

/**
 * 80-bin Kaldi filterbank matching `torchaudio.compliance.kaldi.fbank` (use_energy=false,
 * use_power=true, low_freq=20, high_freq=Nyquist) to ~3e-5 in log energy on the reference fixtures (fixtures/fbank).
 * torch computes in float32, and in near-silent frames the low mel bins sit close to the rounding
 * noise, so every step here is rounded to float32 where torch rounds it: the time-domain steps, the
 * window, the FFT (pocketfft's radix-4/2 passes) and the mel weights. Tables and scratch buffers
 * are built once per configuration.
 */

export type WindowType = 'povey' | 'hamming' | 'hanning';

export interface FbankOptions {
  sampleRate: number;
  numMelBins: number;
  frameLengthMs: number;
  frameShiftMs: number;
  preemphasis: number;
  removeDcOffset: boolean;
  snipEdges: boolean;
  windowType: WindowType;
  /** Multiplies the [-1, 1] waveform first: 1 for 3D-Speaker models, 32768 for WeSpeaker ones. */
  waveformScale: number;
  /** Subtract the per-bin mean over time (sherpa-onnx calls it "global-mean"). */
  cmn: boolean;
}

export interface Features {
  /** Row-major [frames, bins]. */
  data: Float32Array;
  frames: number;
  bins: number;
}

const FLOAT32_EPSILON = 1.1920928955078125e-7;
const LOW_FREQ_HZ = 20;

const melScale = (hz: number): number => 1127 * Math.log(1 + hz / 700);

const f32 = Math.fround;

/**
 * Real FFT in float32 with the factorisation and operation order of FFTPACK's radix-4/radix-2
 * passes, as torch runs them through pocketfft: every sum and product is rounded to float32 where
 * pocketfft rounds it, so near-silent bins carry the same rounding as torchaudio's. The result is
 * FFTPACK's half-complex layout: r0, r1, i1, r2, i2, ..., r(n/2).
 */
class Float32RealFft {
  /** Radix of each pass, in pocketfft's order (a lone factor 2 first). */
  private readonly factors: number[] = [];
  /** Per pass (all but the last): cos/sin of 2*pi*j*l1*i/n, interleaved, by (j-1)*(ido-1)+2i-2. */
  private readonly twiddles: Float32Array[] = [];
  private readonly scratch: Float32Array;
  private readonly halfSqrt2 = f32(Math.SQRT1_2);

  constructor(readonly size: number) {
    let rest = size;
    while (rest % 4 === 0) {
      this.factors.push(4);
      rest /= 4;
    }
    if (rest % 2 === 0) {
      rest /= 2;
      this.factors.push(2);
      [this.factors[0], this.factors[this.factors.length - 1]] = [this.factors.at(-1)!, this.factors[0]!];
    }
    if (rest !== 1) throw new Error(`FFT size ${size} is not a power of two`);
    let l1 = 1;
    for (const [k, ip] of this.factors.entries()) {
      const ido = size / (l1 * ip);
      const table = new Float32Array(k < this.factors.length - 1 ? (ip - 1) * (ido - 1) : 0);
      for (let j = 1; table.length > 0 && j < ip; j++) {
        for (let i = 1; i <= (ido - 1) >> 1; i++) {
          const angle = (2 * Math.PI * j * l1 * i) / size;
          table[(j - 1) * (ido - 1) + 2 * i - 2] = Math.cos(angle);
          table[(j - 1) * (ido - 1) + 2 * i - 1] = Math.sin(angle);
        }
      }
      this.twiddles.push(table);
      l1 *= ip;
    }
    this.scratch = new Float32Array(size);
  }

  /** Transforms `data` (length `size`) in place. */
  forward(data: Float32Array): void {
    let input = data;
    let output = this.scratch;
    let l1 = this.size;
    for (let k = this.factors.length - 1; k >= 0; k--) {
      const ip = this.factors[k]!;
      const ido = this.size / l1;
      l1 /= ip;
      if (ip === 4) this.radix4(ido, l1, input, output, this.twiddles[k]!);
      else this.radix2(ido, l1, input, output, this.twiddles[k]!);
      [input, output] = [output, input];
    }
    if (input !== data) data.set(input);
  }

  private radix2(ido: number, l1: number, cc: Float32Array, ch: Float32Array, wa: Float32Array): void {
    const CC = (a: number, b: number, c: number) => cc[a + ido * (b + l1 * c)]!;
    const CH = (a: number, b: number, c: number) => a + ido * (b + 2 * c);
    for (let k = 0; k < l1; k++) {
      ch[CH(0, 0, k)] = f32(CC(0, k, 0) + CC(0, k, 1));
      ch[CH(ido - 1, 1, k)] = f32(CC(0, k, 0) - CC(0, k, 1));
    }
    if (ido % 2 === 0) {
      for (let k = 0; k < l1; k++) {
        ch[CH(0, 1, k)] = -CC(ido - 1, k, 1);
        ch[CH(ido - 1, 0, k)] = CC(ido - 1, k, 0);
      }
    }
    if (ido <= 2) return;
    for (let k = 0; k < l1; k++) {
      for (let i = 2; i < ido; i += 2) {
        const ic = ido - i;
        const [tr2, ti2] = conjugateTimes(wa[i - 2]!, wa[i - 1]!, CC(i - 1, k, 1), CC(i, k, 1));
        ch[CH(i - 1, 0, k)] = f32(CC(i - 1, k, 0) + tr2);
        ch[CH(ic - 1, 1, k)] = f32(CC(i - 1, k, 0) - tr2);
        ch[CH(i, 0, k)] = f32(ti2 + CC(i, k, 0));
        ch[CH(ic, 1, k)] = f32(ti2 - CC(i, k, 0));
      }
    }
  }

  private radix4(ido: number, l1: number, cc: Float32Array, ch: Float32Array, wa: Float32Array): void {
    const CC = (a: number, b: number, c: number) => cc[a + ido * (b + l1 * c)]!;
    const CH = (a: number, b: number, c: number) => a + ido * (b + 4 * c);
    const WA = (x: number, i: number) => wa[i + x * (ido - 1)]!;
    for (let k = 0; k < l1; k++) {
      const tr1 = f32(CC(0, k, 3) + CC(0, k, 1));
      ch[CH(0, 2, k)] = f32(CC(0, k, 3) - CC(0, k, 1));
      const tr2 = f32(CC(0, k, 0) + CC(0, k, 2));
      ch[CH(ido - 1, 1, k)] = f32(CC(0, k, 0) - CC(0, k, 2));
      ch[CH(0, 0, k)] = f32(tr2 + tr1);
      ch[CH(ido - 1, 3, k)] = f32(tr2 - tr1);
    }
    if (ido % 2 === 0) {
      for (let k = 0; k < l1; k++) {
        const ti1 = f32(-this.halfSqrt2 * f32(CC(ido - 1, k, 1) + CC(ido - 1, k, 3)));
        const tr1 = f32(this.halfSqrt2 * f32(CC(ido - 1, k, 1) - CC(ido - 1, k, 3)));
        ch[CH(ido - 1, 0, k)] = f32(CC(ido - 1, k, 0) + tr1);
        ch[CH(ido - 1, 2, k)] = f32(CC(ido - 1, k, 0) - tr1);
        ch[CH(0, 3, k)] = f32(ti1 + CC(ido - 1, k, 2));
        ch[CH(0, 1, k)] = f32(ti1 - CC(ido - 1, k, 2));
      }
    }
    if (ido <= 2) return;
    for (let k = 0; k < l1; k++) {
      for (let i = 2; i < ido; i += 2) {
        const ic = ido - i;
        const [cr2, ci2] = conjugateTimes(WA(0, i - 2), WA(0, i - 1), CC(i - 1, k, 1), CC(i, k, 1));
        const [cr3, ci3] = conjugateTimes(WA(1, i - 2), WA(1, i - 1), CC(i - 1, k, 2), CC(i, k, 2));
        const [cr4, ci4] = conjugateTimes(WA(2, i - 2), WA(2, i - 1), CC(i - 1, k, 3), CC(i, k, 3));
        const tr1 = f32(cr4 + cr2);
        const tr4 = f32(cr4 - cr2);
        const ti1 = f32(ci2 + ci4);
        const ti4 = f32(ci2 - ci4);
        const tr2 = f32(CC(i - 1, k, 0) + cr3);
        const tr3 = f32(CC(i - 1, k, 0) - cr3);
        const ti2 = f32(CC(i, k, 0) + ci3);
        const ti3 = f32(CC(i, k, 0) - ci3);
        ch[CH(i - 1, 0, k)] = f32(tr2 + tr1);
        ch[CH(ic - 1, 3, k)] = f32(tr2 - tr1);
        ch[CH(i, 0, k)] = f32(ti1 + ti2);
        ch[CH(ic, 3, k)] = f32(ti1 - ti2);
        ch[CH(i - 1, 2, k)] = f32(tr3 + ti4);
        ch[CH(ic - 1, 1, k)] = f32(tr3 - ti4);
        ch[CH(i, 2, k)] = f32(tr4 + ti3);
        ch[CH(ic, 1, k)] = f32(tr4 - ti3);
      }
    }
  }
}

/** conj(w) * x for w = (wr, wi), x = (xr, xi), each product and sum rounded to float32. */
function conjugateTimes(wr: number, wi: number, xr: number, xi: number): [number, number] {
  return [f32(f32(wr * xr) + f32(wi * xi)), f32(f32(wr * xi) - f32(wi * xr))];
}

/** One triangular mel filter, stored sparsely over the FFT bins it covers. */
interface MelFilter {
  firstBin: number;
  weights: Float64Array;
}

/** torchaudio's own float32 windows for 400-sample frames, written by tools/fbank-windows/make-torch-windows.py. */
const torchWindows: { length: number; float32_le_base64: Record<WindowType, string> } = JSON.parse(
  readFileSync(new URL('./torch-windows.json', import.meta.url), 'utf8'),
);

/**
 * torch's symmetric (periodic=false) windows. torch computes them with vectorised float32 cos/pow
 * whose last bit differs from the correctly rounded value for a third of the samples, and quiet
 * frames of the fixtures are sensitive to it (1e-3 in low mel bins), so the 25 ms at 16 kHz frame
 * every speaker model uses takes torch's exact values; other lengths are computed.
 */
function buildWindow(type: WindowType, length: number): Float32Array {
  if (length === torchWindows.length) {
    const bytes = Buffer.from(torchWindows.float32_le_base64[type], 'base64');
    return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  }
  const [alpha, beta] = type === 'hamming' ? [0.54, 0.46] : [0.5, 0.5];
  const window = new Float32Array(length);
  for (let n = 0; n < length; n++) {
    const raised = alpha - beta * Math.cos((2 * Math.PI * n) / (length - 1));
    window[n] = type === 'povey' ? raised ** 0.85 : raised;
  }
  return window;
}

/**
 * Kaldi's triangular mel filters, computed the way torchaudio's get_mel_banks does: the band
 * spacing in double, then every step in float32 (the narrow low filters notice the difference).
 */
function buildMelFilters(numBins: number, fftSize: number, sampleRate: number): MelFilter[] {
  const melScaleF32 = (hz: number) => f32(1127 * f32(Math.log(f32(1 + f32(hz / 700)))));
  const fftBinWidth = sampleRate / fftSize;
  const melLow = f32(melScale(LOW_FREQ_HZ));
  const melDelta = f32((melScale(sampleRate / 2) - melScale(LOW_FREQ_HZ)) / (numBins + 1));
  const filters: MelFilter[] = [];
  // Kaldi leaves the Nyquist bin out of every filter (torchaudio pads it with a zero column).
  const usableBins = fftSize / 2;
  const mels = Float32Array.from({ length: usableBins }, (_, i) => melScaleF32(f32(fftBinWidth * i)));
  for (let bin = 0; bin < numBins; bin++) {
    const left = f32(melLow + f32(bin * melDelta));
    const center = f32(melLow + f32((bin + 1) * melDelta));
    const right = f32(melLow + f32((bin + 2) * melDelta));
    const dense = new Float64Array(usableBins);
    let first = -1;
    let last = -1;
    for (let i = 0; i < usableBins; i++) {
      const up = f32(f32(mels[i]! - left) / f32(center - left));
      const down = f32(f32(right - mels[i]!) / f32(right - center));
      const weight = Math.max(0, Math.min(up, down));
      if (weight > 0) {
        if (first < 0) first = i;
        last = i;
        dense[i] = weight;
      }
    }
    filters.push(first < 0 ? { firstBin: 0, weights: new Float64Array(0) } : { firstBin: first, weights: dense.slice(first, last + 1) });
  }
  return filters;
}

/** Precomputed tables and scratch buffers for one configuration, reused by every `compute`. */
export class FbankExtractor {
  readonly frameLength: number;
  readonly frameShift: number;
  private readonly window: Float32Array;
  private readonly filters: MelFilter[];
  private readonly fft: Float32RealFft;
  private readonly frame: Float32Array;
  private readonly spectrum: Float32Array;
  private readonly power: Float64Array;

  constructor(readonly options: FbankOptions) {
    if (!options.snipEdges) throw new Error('only snip_edges=true is implemented');
    this.frameLength = Math.round((options.sampleRate * options.frameLengthMs) / 1000);
    this.frameShift = Math.round((options.sampleRate * options.frameShiftMs) / 1000);
    let fftSize = 1;
    while (fftSize < this.frameLength) fftSize *= 2;
    this.fft = new Float32RealFft(fftSize);
    this.window = buildWindow(options.windowType, this.frameLength);
    this.filters = buildMelFilters(options.numMelBins, fftSize, options.sampleRate);
    this.frame = new Float32Array(this.frameLength);
    this.spectrum = new Float32Array(fftSize);
    this.power = new Float64Array(fftSize / 2 + 1);
  }

  frameCount(samples: number): number {
    return samples < this.frameLength ? 0 : 1 + Math.floor((samples - this.frameLength) / this.frameShift);
  }

  /** `waveform` is mono audio in [-1, 1] at `options.sampleRate`. */
  compute(waveform: Float32Array): Features {
    const { numMelBins: bins, removeDcOffset, waveformScale } = this.options;
    const preemphasis = f32(this.options.preemphasis);
    const frames = this.frameCount(waveform.length);
    const data = new Float32Array(frames * bins);
    const { frame, spectrum, power, window } = this;
    const half = spectrum.length / 2;
    const length = this.frameLength;
    for (let f = 0; f < frames; f++) {
      const offset = f * this.frameShift;
      let mean = 0;
      for (let i = 0; i < length; i++) {
        const sample = f32(waveform[offset + i]! * waveformScale);
        frame[i] = sample;
        mean += sample;
      }
      if (removeDcOffset) {
        mean = f32(mean / length);
        for (let i = 0; i < length; i++) frame[i] = frame[i]! - mean;
      }
      // Pre-emphasis runs backwards so each step still reads the previous raw sample;
      // the first sample uses itself as its predecessor, as Kaldi does.
      for (let i = length - 1; i > 0; i--) frame[i] = frame[i]! - f32(preemphasis * frame[i - 1]!);
      frame[0] = frame[0]! - f32(preemphasis * frame[0]!);
      spectrum.fill(0);
      for (let i = 0; i < length; i++) spectrum[i] = f32(frame[i]! * window[i]!);
      this.fft.forward(spectrum);
      // torch takes |X| (a float32 hypot) and squares it, rather than summing re² + im².
      for (let k = 0; k <= half; k++) {
        const re = k === 0 ? spectrum[0]! : k === half ? spectrum[spectrum.length - 1]! : spectrum[2 * k - 1]!;
        const im = k === 0 || k === half ? 0 : spectrum[2 * k]!;
        const magnitude = f32(Math.hypot(re, im));
        power[k] = f32(magnitude * magnitude);
      }
      const row = f * bins;
      for (let b = 0; b < bins; b++) {
        const { firstBin, weights } = this.filters[b]!;
        let energy = 0;
        for (let k = 0; k < weights.length; k++) energy += power[firstBin + k]! * weights[k]!;
        data[row + b] = Math.log(Math.max(f32(energy), FLOAT32_EPSILON));
      }
    }
    if (this.options.cmn) subtractMeanOverTime(data, frames, bins);
    return { data, frames, bins };
  }
}

function subtractMeanOverTime(data: Float32Array, frames: number, bins: number): void {
  if (frames === 0) return;
  const means = new Float64Array(bins);
  for (let f = 0; f < frames; f++) for (let b = 0; b < bins; b++) means[b] = means[b]! + data[f * bins + b]!;
  for (let b = 0; b < bins; b++) means[b] = means[b]! / frames;
  for (let f = 0; f < frames; f++) for (let b = 0; b < bins; b++) data[f * bins + b] = data[f * bins + b]! - means[b]!;
}
