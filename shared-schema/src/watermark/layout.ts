/**
 * Where the watermark lives in time and frequency, in physical units (seconds, hertz) so that the
 * same layout holds at every sample rate: a file is cut into frames of `frameSeconds`, each frame
 * into `slotsPerFrame` slots, the band `lowHz`–`highHz` into `bands` bands; a tile is one slot of
 * one band, and the tiles of two neighbouring bands in the same slot form a pair, which carries one
 * coded bit in the difference of their log energies. Same-slot pairs, because a pair of the same band
 * in neighbouring slots shares a boundary in time: a cut a few milliseconds off moves energy from one
 * tile to the other, and the difference of speech tiles moved by about 1 dB per 4 ms (measured). docs/WATERMARK.md explains the choices.
 */
import { KeyedRandom } from './keyed-random.js';
import { WATERMARK_CODED_BITS } from './payload-code.js';

export interface WatermarkLayout {
  lowHz: number;
  highHz: number;
  bands: number;
  slotSeconds: number;
  slotsPerFrame: number;
  /** STFT hop in seconds; the window is two hops (sqrt-Hann, 50 % overlap). */
  hopSeconds: number;
  /** Quantization step of the log-energy difference, in dB. */
  stepDb: number;
}

export const WATERMARK_LAYOUT: WatermarkLayout = {
  lowHz: 500,
  highHz: 3500,
  bands: 10,
  slotSeconds: 0.06,
  slotsPerFrame: 80,
  hopSeconds: 0.008,
  stepDb: 11,
};

export const frameSeconds = (layout: WatermarkLayout) => layout.slotSeconds * layout.slotsPerFrame;
export const pairsPerFrame = (layout: WatermarkLayout) => layout.slotsPerFrame * (layout.bands / 2);

/** The STFT at one sample rate: hop and window in samples, FFT size, and each band's bins. */
export interface Framing {
  sampleRate: number;
  hop: number;
  /** The hop's true duration at this rate (hop samples / rate), which slot boundaries are computed with. */
  hopSeconds: number;
  fftSize: number;
  /** Analysis and synthesis window (sqrt of a periodic Hann of 2·hop samples): they overlap-add to 1. */
  window: Float64Array;
  /** First bin of each band and one past the last of the last band: `bands + 1` entries (the bins the embedder scales). */
  bandEdges: Uint32Array;
  /**
   * The bins a band's energy is measured on, [measureFrom[b], measureTo[b]): the band less
   * EDGE_GUARD_HZ at each edge. Neighbouring bands form a pair, and bins fall on different
   * frequencies at different rates (62.5 Hz apart at 16 kHz, 46.9 at 24 kHz): a harmonic near the
   * shared edge would count for one tile at one rate and for the other at another, and a file marked
   * at 24 kHz and read at 16 kHz (as verify decodes) lost its mark.
   */
  measureFrom: Uint32Array;
  measureTo: Uint32Array;
}

/** Hz left out of the energy measurement at each band edge. */
const EDGE_GUARD_HZ = 50;

export function framingFor(layout: WatermarkLayout, sampleRate: number): Framing {
  const hop = Math.max(1, Math.round(sampleRate * layout.hopSeconds));
  const windowLength = 2 * hop;
  let fftSize = 4;
  while (fftSize < windowLength) fftSize *= 2;
  const window = new Float64Array(windowLength);
  for (let i = 0; i < windowLength; i++) window[i] = Math.sqrt(0.5 - 0.5 * Math.cos((2 * Math.PI * i) / windowLength));
  const bandEdges = new Uint32Array(layout.bands + 1);
  const width = (layout.highHz - layout.lowHz) / layout.bands;
  for (let b = 0; b <= layout.bands; b++) {
    bandEdges[b] = Math.min(fftSize / 2, Math.round(((layout.lowHz + b * width) * fftSize) / sampleRate));
  }
  const measureFrom = new Uint32Array(layout.bands);
  const measureTo = new Uint32Array(layout.bands);
  for (let b = 0; b < layout.bands; b++) {
    measureFrom[b] = Math.ceil(((layout.lowHz + b * width + EDGE_GUARD_HZ) * fftSize) / sampleRate);
    measureTo[b] = Math.floor(((layout.lowHz + (b + 1) * width - EDGE_GUARD_HZ) * fftSize) / sampleRate) + 1;
  }
  return { sampleRate, hop, hopSeconds: hop / sampleRate, fftSize, window, bandEdges, measureFrom, measureTo };
}

/**
 * The analysis frames a tile starting at `startSeconds` covers, [first, end), when frames are
 * `stepSeconds` apart: the embedder's frames are a hop apart, the detector's half a hop (a finer
 * search for where a cut file starts). Both use this rounding.
 */
export function tileFrames(stepSeconds: number, layout: WatermarkLayout, startSeconds: number): [number, number] {
  return [Math.round(startSeconds / stepSeconds), Math.round((startSeconds + layout.slotSeconds) / stepSeconds)];
}

/** Slot and the pair's two bands of pair `q` of a frame. */
export function pairTiles(layout: WatermarkLayout, q: number): { slot: number; bandA: number; bandB: number } {
  const perSlot = layout.bands / 2;
  const j = q % perSlot;
  return { slot: Math.floor(q / perSlot), bandA: 2 * j, bandB: 2 * j + 1 };
}

/**
 * The keyed assignment of one frame: pair `q` (`pairTiles`) carries coded
 * bit `bitOfPair[q]`, XOR `whitening[bit]`, on a lattice shifted by `ditherDb[q]`.
 */
export interface KeyedAssignment {
  bitOfPair: Uint32Array;
  ditherDb: Float64Array;
  whitening: Uint8Array;
}

const assignments = new Map<string, KeyedAssignment>();

export function keyedAssignment(layout: WatermarkLayout, key: string): KeyedAssignment {
  const cacheKey = `${JSON.stringify(layout)}\u0000${key}`;
  const cached = assignments.get(cacheKey);
  if (cached) return cached;
  const pairs = pairsPerFrame(layout);
  const bitOfPair = interleave(layout, new KeyedRandom(key, 'pairs'));
  const ditherRandom = new KeyedRandom(key, 'dither');
  const ditherDb = new Float64Array(pairs);
  for (let q = 0; q < pairs; q++) ditherDb[q] = ditherRandom.nextUnit() * layout.stepDb;
  const whiteningRandom = new KeyedRandom(key, 'whitening');
  const whitening = new Uint8Array(WATERMARK_CODED_BITS);
  for (let i = 0; i < whitening.length; i++) whitening[i] = whiteningRandom.nextUint32() >>> 31;
  const assignment = { bitOfPair, ditherDb, whitening };
  if (assignments.size > 16) assignments.clear();
  assignments.set(cacheKey, assignment);
  return assignment;
}

/**
 * Coded bits the interleaver gives one copy fewer when the frame's pairs do not divide evenly: the
 * first and last of the code, which the zero-terminated trellis protects best (few paths reach its
 * known start and end states).
 */
const TERMINAL_BITS_PER_END = 10;
/** Slots between code-adjacent coded bits in one copy (coprime with the copy's slots), so that a pause erases no run of the code. */
const CODE_STRIDE_SLOTS = 7;

/**
 * The interleaver: which coded bit each pair of a frame carries. A bit is lost only when every pair
 * that carries it is unreadable, and unreadable pairs come in clumps: a pause erases every band of a
 * few slots, a quiet or noisy upper band the same band over much of the frame. So the copies of a
 * bit are placed where the clumps are unlikely to meet: copy c fills the c-th run of
 * WATERMARK_CODED_BITS / (bands / 2) slots (the copies of a bit are 24–28 slots apart, 1.4–1.7 s),
 * in the band pair 2c rows above the first copy's (mod 5: every bit of three copies has one in the
 * lowest two and one in the highest two band pairs, a bit of two copies has them 2 or 3 band pairs
 * apart), and inside a copy code-adjacent bits are CODE_STRIDE_SLOTS slots apart. The key rotates
 * the whole pattern in time and in band; the keyed dither and whitening are what make a mark under
 * another key unreadable.
 */
function interleave(layout: WatermarkLayout, random: KeyedRandom): Uint32Array {
  const rows = layout.bands / 2;
  const pairs = pairsPerFrame(layout);
  const coded = WATERMARK_CODED_BITS;
  const slotsPerCopy = coded / rows;
  const terminal = 2 * TERMINAL_BITS_PER_END;
  const middleSlots = (coded - terminal) / rows;
  if (!Number.isInteger(slotsPerCopy) || !Number.isInteger(middleSlots) || pairs !== 3 * coded - terminal) {
    throw new RangeError(
      'the interleaver needs coded bits that fill whole slots, three copies of each but the terminal bits, two of those',
    );
  }
  // where each coded bit sits inside one copy: slot `within / rows`, band pair base `within % rows`
  const bitAt = new Uint32Array(coded);
  for (let m = 0; m < coded - terminal; m++) {
    const slot = (m * CODE_STRIDE_SLOTS) % middleSlots;
    bitAt[slot * rows + Math.floor(m / middleSlots)] = TERMINAL_BITS_PER_END + m;
  }
  const terminalSlots = terminal / rows;
  for (let t = 0; t < terminal; t++) {
    const bit = t < TERMINAL_BITS_PER_END ? t : coded - terminal + t;
    bitAt[(middleSlots + (t % terminalSlots)) * rows + Math.floor(t / terminalSlots)] = bit;
  }
  const slotRotation = random.nextBelow(layout.slotsPerFrame);
  const rowRotation = random.nextBelow(rows);
  const bitOfPair = new Uint32Array(pairs);
  for (let k = 0; k < pairs; k++) {
    const copy = Math.floor(k / coded);
    const within = k % coded;
    const slot = (Math.floor(k / rows) + slotRotation) % layout.slotsPerFrame;
    const row = (within + 2 * copy + rowRotation) % rows;
    bitOfPair[slot * rows + row] = bitAt[within]!;
  }
  return bitOfPair;
}
