/**
 * Reading the mark. The input is read in windows of two frames (a frame every frame length, so a
 * marked stretch of one frame or more lies whole in one of them); at most `maxWindows` windows,
 * spread over the input, are read, so hours of audio cost a bounded time. In each window every start
 * offset of the frame (one per hop) is tried: the frame is cyclic, so any stretch of one frame's
 * length holds every pair once, whatever the offset. An offset is scored blind, without the payload,
 * by how close the pairs' differences sit to the union of both bits' lattices (a marked pair sits on
 * it, an unmarked one anywhere); the best offsets are decoded: soft values of every repeat are
 * summed per coded bit, weighted by how marked each repeat looks, then Viterbi and the CRC. Last, the
 * soft values of all windows are summed and decoded once more.
 */
import { limits } from '../limits.js';
import { analyseBands, framesFor } from './analysis.js';
import { type Framing, frameSeconds, framingFor, keyedAssignment, tileFrames, WATERMARK_LAYOUT, type WatermarkLayout } from './layout.js';
import { decodeWatermarkPayload, WATERMARK_CODED_BITS } from './payload-code.js';
import { onAnalysisGrid } from './resample.js';

/** Tiles quieter than this (dB re full-scale white noise) are not read: 10 dB under what the embedder marks, for gain changes. */
export const DETECT_MIN_TILE_DB = -90;
/** An offset is decoded only when its blind score (a z-score under "unmarked") reaches this. */
export const DETECT_MIN_SYNC_Z = 4;
/** A window whose best offset scores this much joins the sum of all windows that is decoded last. */
const COMBINE_MIN_SYNC_Z = 2.5;
/**
 * Offsets decoded per window: the best only. Every decode is a 2⁻²⁴ chance of a false payload, so
 * the count of decodes per file is what the false-payload bound is made of.
 */
export const DETECT_CANDIDATES_PER_WINDOW = 1;
/**
 * The background of a window, per band: this quantile of its frames' energies. Digital silence gives
 * 0; a noisy recording or added noise gives the noise, which is subtracted from every tile before
 * the difference is taken (additive noise pulls every difference towards the noise's own).
 */
const NOISE_FLOOR_QUANTILE = 0.1;
/**
 * The background's mean energy per frame over that quantile. A band of a few hundred hertz holds about
 * 8 independent values per analysis frame at any rate (the window and the band are set in seconds and
 * hertz), so a frame of pure noise has a chi-square energy with about 8 degrees of freedom, whose
 * 10th percentile is 0.44 of its mean: the quantile alone left half the noise in every tile, which
 * pulled the differences towards 0 dB.
 */
const NOISE_PER_QUANTILE = 2;
/** Analysis frames per hop: the search for a cut's start moves in half hops (4 ms). */
const FRAMES_PER_HOP = 2;
/**
 * How much a tile's noise counts against its pair: weight 1 / (1 + k/snrA + k/snrB). 4 read two more
 * dev files of 24 through white noise at 10 dB SNR than 2 did, and as many through everything else;
 * 8 and up lost files (docs/WATERMARK.md).
 */
export const DETECT_SNR_WEIGHT = 4;
/**
 * A tile is read when its energy exceeds this many times the background's. Pairs just over the
 * background still read right most of the time once weighted by their SNR (measured: under white
 * noise at 20 dB SNR, 1–8 % of the read pairs were wrong while erasures, pairs not read, were what
 * lost files), so the threshold is low.
 */
const MIN_TILE_OVER_NOISE = 1.25;
/** The coarse search scores every COARSE_STRIDE-th offset (analysis frames, 4 ms each). */
const COARSE_STRIDE = 2;

export interface DetectOptions {
  layout?: WatermarkLayout;
  /** Windows read at most (limits.watermarkDetectMaxWindows, which is also the ceiling). */
  maxWindows?: number;
}

export interface WatermarkDetection {
  found: boolean;
  /** The payload's id, when found. */
  id?: string;
  /**
   * The blind score of the best offset: a z-score, about N(0, 1) on unmarked audio; a clean 5 s
   * mark scores 15 or more.
   */
  syncZ: number;
  /** Agreement of the soft values with the decoded codeword (−1…1), when found. */
  agreement?: number;
  /** Where the frame starts, in seconds from the start of the input, when found. */
  frameStartSeconds?: number;
  /** Windows read and offsets decoded (each decode is one chance of a false payload: docs/WATERMARK.md). */
  windowsRead: number;
  decodeAttempts: number;
}

export function detectWatermark(samples: Float32Array, sampleRate: number, key: string, options: DetectOptions = {}): WatermarkDetection {
  const layout = options.layout ?? WATERMARK_LAYOUT;
  const maxWindows = Math.min(options.maxWindows ?? limits.watermarkDetectMaxWindows, limits.watermarkDetectMaxWindows);
  if (!(sampleRate >= 8000 && sampleRate <= 192_000)) throw new RangeError('sample rate must be 8 to 192 kHz');
  // read on the grid the embedder marked on (resample.ts)
  const { analysisRate, analysed } = onAnalysisGrid(samples, sampleRate);
  const framing = framingFor(layout, analysisRate);
  const frame = frameSeconds(layout);
  const step = framing.hopSeconds / FRAMES_PER_HOP;
  const starts = windowStarts(analysed.length / analysisRate, frame, maxWindows);
  const combined = new Float64Array(WATERMARK_CODED_BITS);
  let combinedWindows = 0;
  let attempts = 0;
  let bestZ = 0;
  let windowsRead = 0;
  for (const startSeconds of starts) {
    const firstFrame = Math.round(startSeconds / step);
    const endFrame = Math.min(framesFor(analysed.length, framing.hop, FRAMES_PER_HOP), Math.round((startSeconds + 2 * frame) / step) + 1);
    const spectra = analyseBands(analysed, framing, firstFrame, endFrame - firstFrame, false, FRAMES_PER_HOP);
    const search = new OffsetSearch(layout, framing, key, spectra.energy, spectra.frames);
    windowsRead++;
    for (const { offset, z } of search.rankOffsets().slice(0, DETECT_CANDIDATES_PER_WINDOW)) {
      bestZ = Math.max(bestZ, z);
      if (z < COMBINE_MIN_SYNC_Z) break;
      const soft = search.softValues(offset);
      // every window that looks somewhat marked joins the sum, weighted by its score
      const scale = z / norm(soft);
      for (let i = 0; i < combined.length; i++) combined[i] = combined[i]! + soft[i]! * scale;
      combinedWindows++;
      if (z < DETECT_MIN_SYNC_Z) break;
      attempts++;
      const decoded = decodeWatermarkPayload(soft);
      if (decoded) {
        return {
          found: true,
          id: decoded.id,
          syncZ: z,
          agreement: decoded.agreement,
          frameStartSeconds: (firstFrame + offset) * step,
          windowsRead,
          decodeAttempts: attempts,
        };
      }
    }
  }
  if (combinedWindows > 1) {
    attempts++;
    const decoded = decodeWatermarkPayload(combined);
    if (decoded) return { found: true, id: decoded.id, syncZ: bestZ, agreement: decoded.agreement, windowsRead, decodeAttempts: attempts };
  }
  return { found: false, syncZ: bestZ, windowsRead, decodeAttempts: attempts };
}

function norm(values: Float64Array): number {
  let sum = 0;
  for (const value of values) sum += value * value;
  return Math.sqrt(sum) || 1;
}

/**
 * Window starts, in seconds: every frame length while two frames fit, the last window ending at the
 * end; a file up to 2.5 frames long is one window. Past `maxWindows`, that many spread evenly.
 */
export function windowStarts(duration: number, frame: number, maxWindows: number): number[] {
  if (duration <= 2.5 * frame) return [0];
  const last = duration - 2 * frame;
  const count = Math.ceil(last / frame) + 1;
  if (count <= maxWindows) return Array.from({ length: count }, (_, i) => Math.min(i * frame, last));
  return Array.from({ length: maxWindows }, (_, i) => (i * last) / (maxWindows - 1));
}

/** The cyclic offset search over one window's band energies (frames half a hop apart). */
class OffsetSearch {
  private readonly prefix: Float64Array;
  /** Per band, the energy of a frame of the window's background (a low quantile over its frames). */
  private readonly noiseFloor: Float64Array;
  /** Per band, the energy of one analysis frame at DETECT_MIN_TILE_DB (tileLevelDb's reference). */
  private readonly minEnergyPerFrame: Float64Array;
  /** Offsets (frame starts) tried: one per analysis frame over one watermark frame. */
  private readonly offsets: number;
  private readonly step: number;
  private readonly assignment: ReturnType<typeof keyedAssignment>;

  constructor(
    private readonly layout: WatermarkLayout,
    readonly framing: Framing,
    key: string,
    energy: Float64Array,
    private readonly frames: number,
  ) {
    const bands = layout.bands;
    this.prefix = new Float64Array((frames + 1) * bands);
    for (let h = 0; h < frames; h++) {
      for (let b = 0; b < bands; b++) this.prefix[(h + 1) * bands + b] = this.prefix[h * bands + b]! + energy[h * bands + b]!;
    }
    // a tile's energy sums FRAMES_PER_HOP frames per hop: its white-noise reference scales alike
    this.minEnergyPerFrame = Float64Array.from({ length: bands }, (_, b) => {
      const bins = framing.measureTo[b]! - framing.measureFrom[b]!;
      return 10 ** (DETECT_MIN_TILE_DB / 10) * bins * framing.hop * FRAMES_PER_HOP;
    });
    this.noiseFloor = new Float64Array(bands);
    const column = new Float64Array(frames);
    for (let b = 0; b < bands; b++) {
      for (let h = 0; h < frames; h++) column[h] = energy[h * bands + b]!;
      column.sort();
      this.noiseFloor[b] = (column[Math.floor(frames * NOISE_FLOOR_QUANTILE)] ?? 0) * NOISE_PER_QUANTILE;
    }
    this.step = framing.hopSeconds / FRAMES_PER_HOP;
    this.offsets = Math.ceil(frameSeconds(layout) / this.step);
    this.assignment = keyedAssignment(layout, key);
  }

  /**
   * Visits every pair of every repeat of the frame that lies whole in the window when the frame
   * starts at analysis frame `offset`: (repeat, pair, phase of the difference on the lattice in turns,
   * weight of the pair by the SNR of its tiles).
   */
  private visit(offset: number, onPair: (repeat: number, pair: number, turns: number, weight: number) => void): void {
    const { layout, frames, step } = this;
    const bands = layout.bands;
    const perSlot = bands / 2;
    const frame = frameSeconds(layout);
    const lastRepeat = Math.ceil((frames * step) / frame);
    const minEnergyPerFrame = this.minEnergyPerFrame;
    for (let repeat = -1; repeat <= lastRepeat; repeat++) {
      const repeatStart = offset * step + repeat * frame;
      for (let slot = 0; slot < layout.slotsPerFrame; slot++) {
        const [first, end] = tileFrames(step, layout, repeatStart + slot * layout.slotSeconds);
        if (first < 0 || end > frames) continue;
        const count = end - first;
        for (let j = 0; j < perSlot; j++) {
          const bandA = 2 * j;
          const bandB = bandA + 1;
          const energyA = this.prefix[end * bands + bandA]! - this.prefix[first * bands + bandA]!;
          const energyB = this.prefix[end * bands + bandB]! - this.prefix[first * bands + bandB]!;
          if (energyA < minEnergyPerFrame[bandA]! * count || energyB < minEnergyPerFrame[bandB]! * count) continue;
          const noiseA = this.noiseFloor[bandA]! * count;
          const noiseB = this.noiseFloor[bandB]! * count;
          // a tile at the background says nothing; the rest are weighted by their SNR
          if (energyA <= MIN_TILE_OVER_NOISE * noiseA || energyB <= MIN_TILE_OVER_NOISE * noiseB) continue;
          const weight = 1 / (1 + (DETECT_SNR_WEIGHT * noiseA) / (energyA - noiseA) + (DETECT_SNR_WEIGHT * noiseB) / (energyB - noiseB));
          const pair = slot * perSlot + j;
          const differenceDb = 10 * Math.log10((energyA - noiseA) / (energyB - noiseB));
          onPair(repeat, pair, (differenceDb - this.assignment.ditherDb[pair]!) / layout.stepDb, weight);
        }
      }
    }
  }

  /** The blind score of `offset`: Σ cos(4π·phase) over its pairs, as a z-score. */
  private score(offset: number): number {
    let sum = 0;
    let squares = 0;
    this.visit(offset, (_repeat, _pair, turns, weight) => {
      sum += weight * Math.cos(4 * Math.PI * turns);
      squares += weight * weight;
    });
    // cos(4π·u) of a phase u uniform on the lattice has mean 0 and variance 1/2
    return squares > 0 ? sum / Math.sqrt(squares / 2) : 0;
  }

  /**
   * The best offsets with their blind scores, best first, at least three frames apart. Every
   * COARSE_STRIDE-th offset is scored (8 ms apart: a mark that far off still scores well above
   * unmarked audio), then every offset around the best four.
   */
  rankOffsets(): { offset: number; z: number }[] {
    const coarse: { offset: number; z: number }[] = [];
    for (let offset = 0; offset < this.offsets; offset += COARSE_STRIDE) coarse.push({ offset, z: this.score(offset) });
    coarse.sort((a, b) => b.z - a.z);
    const refined: { offset: number; z: number }[] = [];
    for (const candidate of coarse.slice(0, 4)) {
      refined.push(candidate);
      for (let delta = 1 - COARSE_STRIDE; delta < COARSE_STRIDE; delta++) {
        if (delta === 0) continue;
        const offset = (candidate.offset + delta + this.offsets) % this.offsets;
        refined.push({ offset, z: this.score(offset) });
      }
    }
    refined.sort((a, b) => b.z - a.z);
    const chosen: { offset: number; z: number }[] = [];
    for (const candidate of refined) {
      const apart = chosen.every(({ offset }) => {
        const distance = Math.abs(offset - candidate.offset);
        return Math.min(distance, this.offsets - distance) > 2;
      });
      if (apart) chosen.push(candidate);
      if (chosen.length >= DETECT_CANDIDATES_PER_WINDOW) break;
    }
    return chosen;
  }

  /** Soft values per coded bit at `offset` (positive: bit 0), whitening undone, repeats weighted by how marked they look. */
  softValues(offset: number): Float64Array {
    const repeats = new Map<number, { sync: number; count: number; soft: Float64Array }>();
    this.visit(offset, (repeat, pair, turns, weight) => {
      let entry = repeats.get(repeat);
      if (!entry) {
        entry = { sync: 0, count: 0, soft: new Float64Array(WATERMARK_CODED_BITS) };
        repeats.set(repeat, entry);
      }
      entry.sync += weight * Math.cos(4 * Math.PI * turns);
      entry.count += weight;
      const bit = this.assignment.bitOfPair[pair]!;
      const value = weight * Math.cos(2 * Math.PI * turns);
      entry.soft[bit] = entry.soft[bit]! + (this.assignment.whitening[bit] ? -value : value);
    });
    const soft = new Float64Array(WATERMARK_CODED_BITS);
    for (const { sync, count, soft: repeatSoft } of repeats.values()) {
      // the repeat's mean blind score estimates how marked it is (about 0 where it lies on unmarked audio)
      const weight = Math.max(0, sync) / count;
      for (let i = 0; i < soft.length; i++) soft[i] = soft[i]! + weight * repeatSoft[i]!;
    }
    return soft;
  }
}
