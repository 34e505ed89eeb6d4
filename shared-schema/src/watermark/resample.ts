/**
 * The one analysis grid. The mark is a pattern of band energies measured on short-time spectra, and a
 * spectrum's bins sit at multiples of rate / FFT size: at 24 or 44.1 kHz they fall elsewhere than at
 * 16 kHz, and a band's energy then takes in a different share of its neighbours (a file marked at
 * 24 kHz and read at 16 kHz, which is what verify does with every upload, lost its mark). So both the
 * embedder and the detector work at 16 kHz (8 kHz input at its own rate: its bins, 62.5 Hz apart with
 * a 16 ms window, are the same): other rates are resampled to 16 kHz for analysis, and the embedder
 * brings only the mark (band-limited to 0.5–3.5 kHz, 25 dB under the audio) back to the file's rate
 * and adds it. The audio itself is never resampled.
 */

import { besselI0, kaiserDesign } from '../dsp/kaiser.js';

/** The rate every analysis runs at, except for 8 kHz input. */
export const ANALYSIS_RATE = 16_000;
/** What the resampling filter keeps flat, Hz: the top of the watermark band plus a margin. */
const PASSBAND_HZ = 3700;
/** Stopband attenuation, dB: aliases and images of the band end this far under it. */
const STOPBAND_DB = 60;
/** Kernel values tabulated per half-width (linear interpolation between them). */
const TABLE_POINTS = 2048;

export function analysisRateFor(sampleRate: number): number {
  return sampleRate === 8000 ? 8000 : ANALYSIS_RATE;
}

/** `samples` on the grid every rate is marked and read on: resampled to `analysisRateFor(sampleRate)` when that differs. */
export function onAnalysisGrid(samples: Float32Array, sampleRate: number): { analysisRate: number; analysed: Float32Array | Float64Array } {
  const analysisRate = analysisRateFor(sampleRate);
  if (analysisRate === sampleRate) return { analysisRate, analysed: samples };
  const length = Math.ceil((samples.length * analysisRate) / sampleRate);
  return { analysisRate, analysed: resample(samples, sampleRate, analysisRate, length) };
}

interface Kernel {
  /** Half-width in seconds. */
  halfSeconds: number;
  /** h(t) for t = i·halfSeconds/TABLE_POINTS, i = 0…TABLE_POINTS (h is even; 0 beyond). */
  table: Float64Array;
}

const kernels = new Map<number, Kernel>();

/**
 * A lowpass with cutoff `cutoffHz` as a continuous kernel (Kaiser-windowed sinc, unit area): flat to
 * PASSBAND_HZ, STOPBAND_DB down from 2·cutoff − PASSBAND_HZ, where the first alias or image of the
 * band falls.
 */
function kernelFor(cutoffHz: number): Kernel {
  let kernel = kernels.get(cutoffHz);
  if (kernel) return kernel;
  const transitionHz = 2 * (cutoffHz - PASSBAND_HZ);
  // Kaiser's length, in seconds for a transition in hertz (unrounded: the kernel is continuous)
  const halfSeconds = (STOPBAND_DB - 8) / (2.285 * 2 * Math.PI * transitionHz) / 2;
  const { beta } = kaiserDesign(STOPBAND_DB, transitionHz);
  const table = new Float64Array(TABLE_POINTS + 2);
  for (let i = 0; i <= TABLE_POINTS; i++) {
    const t = (i / TABLE_POINTS) * halfSeconds;
    const x = 2 * cutoffHz * t;
    const sinc = i === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
    const ratio = i / TABLE_POINTS;
    table[i] = 2 * cutoffHz * sinc * (besselI0(beta * Math.sqrt(Math.max(0, 1 - ratio * ratio))) / besselI0(beta));
  }
  kernel = { halfSeconds, table };
  kernels.set(cutoffHz, kernel);
  return kernel;
}

interface PhaseTable {
  taps: number;
  weights: Float64Array;
  /** Per phase, the first tap and one past the last whose weight is not a zero of the kernel. */
  tapFrom: Uint32Array;
  tapTo: Uint32Array;
}

const phaseTables = new Map<string, PhaseTable>();

/**
 * A weight this small against its phase's largest is one of the sinc's zero crossings, an exact zero
 * of the ideal kernel that the tabulation leaves at about 10⁻⁶: when the output rate is a multiple of
 * the input's and the cutoff is the input's Nyquist frequency, every output on an input sample is
 * that sample alone, and skipping those taps makes upsampling by 3 (16 to 48 kHz) about half the work.
 */
const ZERO_WEIGHT = 1e-5;

/**
 * The weights of each output phase: with rates P·g and Q·g, output n lies at input position n·Q/P,
 * whose fraction repeats every P outputs. weights[phase · taps + j] multiplies input sample
 * floor(n·Q/P) − reach + j.
 */
function phaseTable(inRate: number, outRate: number, phases: number): PhaseTable & { reach: number } {
  const { table, halfSeconds } = kernelFor(Math.min(ANALYSIS_RATE / 2, inRate / 2, outRate / 2));
  const halfInput = halfSeconds * inRate;
  const reach = Math.ceil(halfInput);
  const taps = 2 * reach + 2;
  const cacheKey = `${inRate}/${outRate}`;
  const cached = phaseTables.get(cacheKey);
  if (cached) return { ...cached, reach };
  const weights = new Float64Array(phases * taps);
  const tapFrom = new Uint32Array(phases);
  const tapTo = new Uint32Array(phases);
  for (let phase = 0; phase < phases; phase++) {
    const fraction = phase / phases;
    let peak = 0;
    for (let j = 0; j < taps; j++) {
      const distance = Math.abs(fraction - (j - reach)) / halfInput;
      if (distance >= 1) continue;
      const at = distance * TABLE_POINTS;
      const i = Math.floor(at);
      weights[phase * taps + j] = (table[i]! + (at - i) * (table[i + 1]! - table[i]!)) / inRate;
      peak = Math.max(peak, Math.abs(weights[phase * taps + j]!));
    }
    let from = 0;
    let to = taps;
    for (let j = 0; j < taps; j++) if (Math.abs(weights[phase * taps + j]!) < ZERO_WEIGHT * peak) weights[phase * taps + j] = 0;
    while (from < to && weights[phase * taps + from] === 0) from++;
    while (to > from && weights[phase * taps + to - 1] === 0) to--;
    tapFrom[phase] = from;
    tapTo[phase] = to;
  }
  const built = { taps, weights, tapFrom, tapTo };
  phaseTables.set(cacheKey, built);
  return { ...built, reach };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * `input` (at `inRate`) at `outRate`, `outLength` samples, sample n of the output at time n / outRate
 * (windowed-sinc interpolation, one weight table per phase of the rates' ratio; zeros stay zero).
 * Rates are whole hertz.
 */
export function resample(input: Float32Array | Float64Array, inRate: number, outRate: number, outLength: number): Float64Array {
  const common = gcd(inRate, outRate);
  const phases = outRate / common;
  const inStep = inRate / common;
  const { taps, reach, weights, tapFrom, tapTo } = phaseTable(inRate, outRate, phases);
  if (phases === 1) return decimate(input, inStep, reach, weights, outLength);
  const out = new Float64Array(outLength);
  for (let n = 0, phase = 0, base = 0; n < outLength; n++) {
    const first = base - reach;
    const row = phase * taps;
    const from = tapFrom[phase]!;
    const to = tapTo[phase]!;
    let sum = 0;
    if (first + from >= 0 && first + to <= input.length) {
      for (let j = from; j < to; j++) sum += input[first + j]! * weights[row + j]!;
    } else {
      for (let j = Math.max(from, -first); j < to && first + j < input.length; j++) sum += input[first + j]! * weights[row + j]!;
    }
    out[n] = sum;
    phase += inStep;
    while (phase >= phases) {
      phase -= phases;
      base++;
    }
  }
  return out;
}

/**
 * `resample` by a whole factor (48 kHz to 16 kHz, the embedder's and the detector's commonest case):
 * one phase, whose weights are symmetric about the output sample's input position (weights[reach ± k]
 * are equal), so each pair of inputs that far either side is added before it is multiplied: half the
 * multiplications of the general loop, and the same sums.
 */
function decimate(
  input: Float32Array | Float64Array,
  factor: number,
  reach: number,
  weights: Float64Array,
  outLength: number,
): Float64Array {
  const out = new Float64Array(outLength);
  const length = input.length;
  const centre = weights[reach]!;
  for (let n = 0; n < outLength; n++) {
    const at = n * factor;
    let sum = at < length ? input[at]! * centre : 0;
    if (at - reach >= 0 && at + reach < length) {
      for (let k = 1; k <= reach; k++) sum += (input[at - k]! + input[at + k]!) * weights[reach + k]!;
    } else {
      for (let k = 1; k <= reach; k++) {
        const before = at - k >= 0 && at - k < length ? input[at - k]! : 0;
        const after = at + k < length ? input[at + k]! : 0;
        sum += (before + after) * weights[reach + k]!;
      }
    }
    out[n] = sum;
  }
  return out;
}
