/**
 * What the mark does to the audio, measured: SNR over the file, the loudest marked frame among the
 * frames that were silent, and the log-spectral distance (a perceptual proxy: the RMS difference of
 * the two log power spectra, in dB, averaged over the frames that carry sound).
 */
import { RealFft } from './fft.js';

/** Frames for the silence check and the spectral distance: 20 ms. */
const FRAME_SECONDS = 0.02;
/** A frame quieter than this (dBFS, RMS re a full-scale sine) counts as silent. */
export const SILENT_FRAME_DBFS = -60;

/** 10·log10(Σ original² / Σ (marked − original)²); Infinity when they are equal. */
export function snrDb(original: Float32Array, marked: Float32Array): number {
  let signal = 0;
  let noise = 0;
  for (let i = 0; i < original.length; i++) {
    signal += original[i]! * original[i]!;
    const difference = marked[i]! - original[i]!;
    noise += difference * difference;
  }
  return noise === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10(signal / noise);
}

function frameDbfs(samples: Float32Array, start: number, length: number): number {
  let sum = 0;
  for (let i = start; i < start + length; i++) sum += samples[i]! * samples[i]!;
  // a full-scale sine has mean square 1/2
  return 10 * Math.log10((2 * sum) / length + 1e-30);
}

export interface SilenceReport {
  /** 20 ms frames of the original below SILENT_FRAME_DBFS. */
  silentFrames: number;
  /** The loudest of those frames in the marked audio, dBFS (−Infinity when there were none, or all stayed digital silence). */
  loudestMarkedDbfs: number;
}

export function silenceReport(original: Float32Array, marked: Float32Array, sampleRate: number): SilenceReport {
  const length = Math.round(sampleRate * FRAME_SECONDS);
  let silentFrames = 0;
  let loudest = Number.NEGATIVE_INFINITY;
  for (let start = 0; start + length <= original.length; start += length) {
    if (frameDbfs(original, start, length) >= SILENT_FRAME_DBFS) continue;
    silentFrames++;
    loudest = Math.max(loudest, frameDbfs(marked, start, length));
  }
  return { silentFrames, loudestMarkedDbfs: loudest <= -299 ? Number.NEGATIVE_INFINITY : loudest };
}

/**
 * Mean log-spectral distance in dB between `original` and `marked` over the 20 ms frames (Hann,
 * next power of two) where the original is above SILENT_FRAME_DBFS, bins 0–`maxHz`.
 */
export function logSpectralDistanceDb(original: Float32Array, marked: Float32Array, sampleRate: number, maxHz = 8000): number {
  const length = Math.round(sampleRate * FRAME_SECONDS);
  let size = 4;
  while (size < length) size *= 2;
  const fft = RealFft.of(size);
  const frameA = new Float64Array(size);
  const frameB = new Float64Array(size);
  const reA = new Float64Array(size / 2 + 1);
  const imA = new Float64Array(size / 2 + 1);
  const reB = new Float64Array(size / 2 + 1);
  const imB = new Float64Array(size / 2 + 1);
  const topBin = Math.min(size / 2, Math.floor((maxHz * size) / sampleRate));
  let total = 0;
  let frames = 0;
  for (let start = 0; start + length <= original.length; start += length) {
    if (frameDbfs(original, start, length) < SILENT_FRAME_DBFS) continue;
    for (let i = 0; i < length; i++) {
      const w = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / length);
      frameA[i] = original[start + i]! * w;
      frameB[i] = marked[start + i]! * w;
    }
    fft.forward(frameA, reA, imA);
    fft.forward(frameB, reB, imB);
    // a floor 60 dB under the frame's peak bin, so that near-empty bins do not dominate
    let peak = 0;
    for (let k = 1; k <= topBin; k++) peak = Math.max(peak, reA[k]! * reA[k]! + imA[k]! * imA[k]!);
    const floor = peak * 1e-6 + 1e-20;
    let sum = 0;
    for (let k = 1; k <= topBin; k++) {
      const a = 10 * Math.log10(reA[k]! * reA[k]! + imA[k]! * imA[k]! + floor);
      const b = 10 * Math.log10(reB[k]! * reB[k]! + imB[k]! * imB[k]! + floor);
      sum += (a - b) * (a - b);
    }
    total += Math.sqrt(sum / topBin);
    frames++;
  }
  return frames === 0 ? 0 : total / frames;
}
