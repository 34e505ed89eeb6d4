import { describe, expect, it } from 'vitest';
import { limits } from '../limits.js';
import { concatSamples as concat, speechLike } from '../testing/speech-like.js';
import { detectWatermark, windowStarts } from './detect.js';
import { embedWatermark, MIN_SNR_DB } from './embed.js';
import { RealFft } from './fft.js';
import { markPcm, newWatermarkId, readPcmWatermark, WATERMARK_ALGORITHM, WATERMARK_FRAME_SECONDS } from './index.js';
import { keyedAssignment, pairTiles, WATERMARK_LAYOUT } from './layout.js';
import { WATERMARK_CODED_BITS } from './payload-code.js';
import { logSpectralDistanceDb, silenceReport, snrDb } from './quality.js';
import { resample } from './resample.js';

const KEY = 'codec-test-key';
const ID = '5a3c0e91b7';

describe('RealFft', () => {
  it('matches a direct DFT and inverts exactly', () => {
    for (const size of [4, 8, 64, 256, 1024]) {
      const fft = RealFft.of(size);
      const x = Float64Array.from({ length: size }, (_, i) => Math.sin(i * 0.37) + ((i * 7919) % 13) / 13 - 0.5);
      const re = new Float64Array(size / 2 + 1);
      const im = new Float64Array(size / 2 + 1);
      fft.forward(x, re, im);
      for (let k = 0; k <= size / 2; k++) {
        let r = 0;
        let m = 0;
        for (let t = 0; t < size; t++) {
          r += x[t]! * Math.cos((2 * Math.PI * k * t) / size);
          m -= x[t]! * Math.sin((2 * Math.PI * k * t) / size);
        }
        expect(re[k]).toBeCloseTo(r, 9);
        expect(im[k]).toBeCloseTo(m, 9);
      }
      const back = new Float64Array(size);
      fft.inverse(re, im, back);
      for (let t = 0; t < size; t++) expect(back[t]).toBeCloseTo(x[t]!, 12);
    }
    expect(() => RealFft.of(100)).toThrow(RangeError);
  });
});

describe('interleaver', () => {
  it('gives every coded bit two or three pairs in different band pairs, one low and one high, 24 slots apart or more', () => {
    for (const key of [KEY, 'vip-watermark-2', 'another key']) {
      const { bitOfPair } = keyedAssignment(WATERMARK_LAYOUT, key);
      const pairsOf = Array.from({ length: WATERMARK_CODED_BITS }, () => [] as { slot: number; row: number }[]);
      bitOfPair.forEach((bit, q) => {
        const { slot, bandA } = pairTiles(WATERMARK_LAYOUT, q);
        pairsOf[bit]!.push({ slot, row: bandA / 2 });
      });
      expect(pairsOf.filter((pairs) => pairs.length === 3)).toHaveLength(120);
      // the 20 bits of two copies are the code's first and last 10, which the terminated trellis protects best
      const twoCopies = pairsOf.flatMap((pairs, bit) => (pairs.length === 2 ? [bit] : []));
      expect(twoCopies).toEqual([...Array.from({ length: 10 }, (_, i) => i), ...Array.from({ length: 10 }, (_, i) => 130 + i)]);
      for (const pairs of pairsOf) {
        const rows = pairs.map(({ row }) => row);
        expect(new Set(rows).size).toBe(pairs.length);
        if (pairs.length === 3) {
          expect(Math.min(...rows)).toBeLessThanOrEqual(1);
          expect(Math.max(...rows)).toBeGreaterThanOrEqual(3);
        } else expect(Math.abs(rows[0]! - rows[1]!)).toBeGreaterThanOrEqual(2);
        for (const a of pairs) {
          for (const b of pairs) {
            if (a === b) continue;
            const apart = Math.abs(a.slot - b.slot);
            expect(Math.min(apart, WATERMARK_LAYOUT.slotsPerFrame - apart)).toBeGreaterThanOrEqual(24);
          }
        }
      }
      // code-adjacent bits of the middle of the code never share a slot
      const firstSlot = pairsOf.map((pairs) => Math.min(...pairs.map(({ slot }) => slot)));
      for (let bit = 10; bit < 129; bit++) expect(firstSlot[bit + 1]).not.toBe(firstSlot[bit]);
    }
  });
});

describe('watermark codec', { timeout: 60_000 }, () => {
  it.each([8000, 16_000, 22_050, 24_000, 44_100, 48_000])('marks and reads back at %i Hz; the unmarked audio reads nothing', (rate) => {
    const original = speechLike(6, rate, rate);
    const marked = embedWatermark(original, rate, ID, KEY);
    const read = detectWatermark(marked, rate, KEY);
    expect(read).toMatchObject({ found: true, id: ID });
    expect(read.syncZ).toBeGreaterThan(8);
    expect(detectWatermark(original, rate, KEY)).toMatchObject({ found: false });
    expect(snrDb(original, marked)).toBeGreaterThanOrEqual(MIN_SNR_DB - 0.01);
  });

  it.each([22_050, 24_000, 44_100, 48_000])(
    'reads a file marked at %i Hz as verify reads it, resampled to 16 kHz, as well as at its own rate',
    (rate) => {
      const marked = embedWatermark(speechLike(6, rate, rate + 1), rate, ID, KEY);
      const own = detectWatermark(marked, rate, KEY);
      const at16k = detectWatermark(
        Float32Array.from(resample(new Float64Array(marked), rate, 16_000, Math.round((marked.length * 16_000) / rate))),
        16_000,
        KEY,
      );
      expect(own).toMatchObject({ found: true, id: ID });
      expect(at16k).toMatchObject({ found: true, id: ID });
      // one analysis grid: the 16 kHz copy scores what the file scores at its own rate (it scored a third of it on the file's own grid)
      expect(at16k.syncZ).toBeGreaterThan(0.8 * own.syncZ);
    },
  );

  it('keeps digital silence exactly silent and quiet frames quiet, at 25 dB SNR or more', () => {
    const rate = 16_000;
    const speech = speechLike(6, rate, 7);
    const quiet = speechLike(2, rate, 8).map((x) => x * 10 ** (-66 / 20));
    const original = concat(new Float32Array(rate), speech, quiet, new Float32Array(rate));
    const marked = embedWatermark(original, rate, ID, KEY);
    expect(marked.subarray(0, rate).every((x) => x === 0)).toBe(true);
    expect(marked.subarray(marked.length - rate).every((x) => x === 0)).toBe(true);
    const silence = silenceReport(original, marked, rate);
    expect(silence.silentFrames).toBeGreaterThan(100);
    expect(silence.loudestMarkedDbfs).toBeLessThan(-50);
    expect(snrDb(original, marked)).toBeGreaterThanOrEqual(25);
    expect(logSpectralDistanceDb(original, marked, rate)).toBeLessThan(2);
    expect(logSpectralDistanceDb(original, original, rate)).toBe(0);
  });

  it('reads the payload in any 5 s window cut from a longer marked file, and in 3 s of dense speech', () => {
    const rate = 16_000;
    const marked = embedWatermark(speechLike(20, rate, 11), rate, ID, KEY);
    for (const startSeconds of [0, 1.3, 4.79, 7.777, 12.05, 15]) {
      const start = Math.round(startSeconds * rate);
      expect(detectWatermark(marked.slice(start, start + 5 * rate), rate, KEY), `5 s from ${startSeconds} s`).toMatchObject({
        found: true,
        id: ID,
      });
    }
    const start = Math.round(2.2 * rate);
    expect(detectWatermark(marked.slice(start, start + 3 * rate), rate, KEY)).toMatchObject({ found: true, id: ID });
  });

  it('reads a marked file inserted between other audio, and where it starts', () => {
    const rate = 24_000;
    const marked = embedWatermark(speechLike(5.5, rate, 21), rate, ID, KEY);
    const before = speechLike(7.3, rate, 22);
    const read = detectWatermark(concat(before, marked, speechLike(6.1, rate, 23)), rate, KEY);
    expect(read).toMatchObject({ found: true, id: ID });
    // the frame starts at the marked file's start, or a whole frame after it
    const phase = (read.frameStartSeconds! - 7.3) / WATERMARK_FRAME_SECONDS;
    expect(Math.abs(phase - Math.round(phase))).toBeLessThan(0.01 / WATERMARK_FRAME_SECONDS);
  });

  it('is read after gain changes and a sample shift, and not under another key', () => {
    const rate = 16_000;
    const marked = embedWatermark(speechLike(6, rate, 31), rate, ID, KEY);
    for (const gain of [0.316, 2]) {
      expect(
        detectWatermark(
          marked.map((x) => x * gain),
          rate,
          KEY,
        ),
      ).toMatchObject({ found: true, id: ID });
    }
    expect(detectWatermark(marked.subarray(37), rate, KEY)).toMatchObject({ found: true, id: ID });
    expect(detectWatermark(marked, rate, 'another key')).toMatchObject({ found: false });
  });

  it('finds nothing in silence, noise and tones', () => {
    const rate = 16_000;
    const n = 6 * rate;
    let state = 5;
    const noise = new Float32Array(n).map(() => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return (state / 2 ** 32 - 0.5) * 0.2;
    });
    const tone = new Float32Array(n).map((_, i) => 0.3 * Math.sin((2 * Math.PI * 1000 * i) / rate));
    for (const signal of [new Float32Array(n), noise, tone]) expect(detectWatermark(signal, rate, KEY).found).toBe(false);
  });

  it('reads a bounded number of windows however long the input', { timeout: 60_000 }, () => {
    const rate = 8000;
    const hour = new Float32Array(3600 * rate);
    const read = detectWatermark(hour, rate, KEY, { maxWindows: 10_000 });
    expect(read.found).toBe(false);
    expect(read.windowsRead).toBe(limits.watermarkDetectMaxWindows);
    expect(read.decodeAttempts).toBeLessThanOrEqual(limits.watermarkDetectMaxWindows + 1);
  });

  it('plans windows a frame apart, the last one ending at the end, spread evenly past the bound', () => {
    expect(windowStarts(10, 4.8, 15)).toEqual([0]);
    expect(windowStarts(20, 4.8, 15)).toEqual([0, 4.8, 9.6, 20 - 9.6]);
    const spread = windowStarts(3600, 4.8, 15);
    expect(spread).toHaveLength(15);
    expect(spread[0]).toBe(0);
    expect(spread[14]).toBeCloseTo(3600 - 9.6, 6);
  });

  it('marks through the grant API with a fresh random id, and refuses a bad grant', () => {
    const rate = 22_050;
    const id = newWatermarkId();
    expect(id).toMatch(/^[0-9a-f]{10}$/);
    const marked = markPcm(speechLike(5.2, rate, 41), rate, { alg: WATERMARK_ALGORITHM, id });
    expect(readPcmWatermark(marked, rate)).toMatchObject({ found: true, id });
    expect(() => markPcm(marked, rate, { alg: WATERMARK_ALGORITHM, id: 'nothex' })).toThrow(RangeError);
    expect(() => markPcm(marked, rate, { alg: 'other' as typeof WATERMARK_ALGORITHM, id })).toThrow(RangeError);
    expect(() => embedWatermark(marked, 4000, id, KEY)).toThrow(RangeError);
  });
});
