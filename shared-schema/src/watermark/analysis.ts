/**
 * The short-time spectrum the watermark works on: frames of two hops (sqrt-Hann), `divisor` frames
 * per hop (1 for the embedder, 2 for the detector), frame f centred on sample round(f·hop/divisor).
 * Only the bins of the watermark band are kept.
 */
import { RealFft } from './fft.js';
import type { Framing } from './layout.js';

export interface BandSpectra {
  /** Frames analysed: h = 0…frames−1. */
  frames: number;
  /** Energy of each frame in each band, frame-major: energy[h * bands + b]. */
  energy: Float64Array;
  /** The band's bins of each frame (bins bandEdges[0]…bandEdges[bands]−1), frame-major; only when kept. */
  re?: Float32Array;
  im?: Float32Array;
}

/** Frames needed to cover `length` samples, `divisor` frames per hop. */
export const framesFor = (length: number, hop: number, divisor: number) => Math.floor((length * divisor) / hop) + 1;

/**
 * Band energies of frames `firstFrame`…`firstFrame + frames − 1` of `samples` (zeros outside it);
 * with `keepSpectra`, also the band's complex bins, for the embedder to scale.
 */
export function analyseBands(
  samples: Float32Array | Float64Array,
  framing: Framing,
  firstFrame: number,
  frames: number,
  keepSpectra: boolean,
  divisor = 1,
): BandSpectra {
  const { hop, fftSize, window, bandEdges, measureFrom, measureTo } = framing;
  const bands = bandEdges.length - 1;
  const lowBin = bandEdges[0]!;
  const binCount = bandEdges[bands]! - lowBin;
  const fft = RealFft.of(fftSize);
  const frame = new Float64Array(fftSize);
  const re = new Float64Array(fftSize / 2 + 1);
  const im = new Float64Array(fftSize / 2 + 1);
  const energy = new Float64Array(frames * bands);
  const keptRe = keepSpectra ? new Float32Array(frames * binCount) : undefined;
  const keptIm = keepSpectra ? new Float32Array(frames * binCount) : undefined;
  const windowLength = window.length;
  for (let f = 0; f < frames; f++) {
    const start = Math.round(((firstFrame + f) * hop) / divisor) - hop;
    if (start >= 0 && start + windowLength <= samples.length) {
      for (let i = 0; i < windowLength; i++) frame[i] = samples[start + i]! * window[i]!;
    } else {
      for (let i = 0; i < windowLength; i++) {
        const at = start + i;
        frame[i] = at >= 0 && at < samples.length ? samples[at]! * window[i]! : 0;
      }
    }
    fft.forward(frame, re, im);
    for (let b = 0; b < bands; b++) {
      let sum = 0;
      for (let k = measureFrom[b]!; k < measureTo[b]!; k++) sum += re[k]! * re[k]! + im[k]! * im[k]!;
      energy[f * bands + b] = sum;
    }
    if (keptRe && keptIm) {
      for (let k = 0; k < binCount; k++) {
        keptRe[f * binCount + k] = re[lowBin + k]!;
        keptIm[f * binCount + k] = im[lowBin + k]!;
      }
    }
  }
  return { frames, energy, ...(keptRe && keptIm ? { re: keptRe, im: keptIm } : {}) };
}

/**
 * Level of a tile in dB relative to full-scale white noise: its energy over what white noise of
 * variance 1 would put in the same frames and bins (each bin of a sqrt-Hann frame of 2·hop samples
 * holds hop·σ² on average).
 */
export function tileLevelDb(energy: number, frames: number, bins: number, hop: number): number {
  return 10 * Math.log10(energy / (frames * bins * hop) + 1e-30);
}
