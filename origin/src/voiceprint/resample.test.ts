import decode from 'audio-decode';
import { describe, expect, it } from 'vitest';
import { OTHER_AUDIO_FIXTURES as OTHER } from '../testing/audio-fixtures.js';
import { readAudioFixture } from '../testing/fixtures.js';
import { createResampler, polyphaseFilter, type ResamplerEngine } from './resample.js';

const TARGET = 16000;

/** Every rate a recorder or codec plausibly uses. */
const COMMON_RATES = [8000, 11025, 12000, 22050, 24000, 32000, 44100, 48000, 88200, 96000, 176400, 192000];

async function resample(
  input: Float32Array,
  fromRate: number,
  options: { engine?: ResamplerEngine; pieces?: number[] } = {},
): Promise<Float32Array> {
  const resampler = await createResampler(fromRate, TARGET, { engine: options.engine });
  const parts: Float32Array[] = [];
  const pieces = options.pieces ?? [input.length];
  for (let offset = 0, i = 0; offset < input.length; i++) {
    const size = pieces[i % pieces.length]!;
    parts.push(resampler.process(input.subarray(offset, offset + size)));
    offset += size;
  }
  parts.push(resampler.flush());
  resampler.destroy();
  const output = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    output.set(part, offset);
    offset += part.length;
  }
  return output;
}

/** `seconds` of a unit sine at `hz`, sampled at `rate`. */
function tone(hz: number, rate: number, seconds: number): Float32Array {
  const samples = new Float32Array(Math.round(rate * seconds));
  for (let n = 0; n < samples.length; n++) samples[n] = Math.sin((2 * Math.PI * hz * n) / rate);
  return samples;
}

/** Output level in dB relative to a unit sine, away from the edges (where the tone starts and stops). */
function levelDb(output: Float32Array): number {
  const edge = 2000;
  let sum = 0;
  for (let k = edge; k < output.length - edge; k++) sum += output[k]! ** 2;
  return 10 * Math.log10(sum / (output.length - 2 * edge) / 0.5);
}

/**
 * Gain and phase of a tone at integer `hz` through the converter: its projection on sin and cos
 * over exactly one second of output (a whole number of cycles, so no leakage). A converter that
 * shifted the signal in time would show a phase.
 */
function toneResponse(output: Float32Array, hz: number): { gainDb: number; phase: number } {
  let sin = 0;
  let cos = 0;
  const start = 4000;
  for (let k = start; k < start + TARGET; k++) {
    const angle = (2 * Math.PI * hz * k) / TARGET;
    sin += output[k]! * Math.sin(angle);
    cos += output[k]! * Math.cos(angle);
  }
  return { gainDb: 20 * Math.log10((2 / TARGET) * Math.hypot(sin, cos)), phase: Math.atan2(cos, sin) };
}

describe('polyphase resampler', () => {
  it('covers every common rate with a small table', () => {
    for (const rate of COMMON_RATES) {
      const filter = polyphaseFilter(rate, TARGET);
      expect(filter, `${rate} Hz`).not.toBeNull();
      expect(filter!.coefficients.length).toBeLessThanOrEqual(100_000); // 44100: 160 phases × 280 taps
    }
    expect(polyphaseFilter(44100, TARGET)).toMatchObject({ up: 160, down: 441 });
    expect(polyphaseFilter(48000, TARGET)).toBe(polyphaseFilter(48000, TARGET)); // cached
    // A rate with no small ratio to 16 kHz would need 16000 phases: libsamplerate takes it.
    expect(polyphaseFilter(44101, TARGET)).toBeNull();
  });

  for (const rate of [48000, 44100, 96000, 22050]) {
    it(`${rate} Hz: attenuates tones above 8 kHz by at least 120 dB`, async () => {
      const levels: number[] = [];
      for (const hz of [8050, 8300, 9000, 10000, 11000, 12000, 16000, 20000, 23000, 30000, 45000]) {
        if (hz >= rate / 2) continue;
        levels.push(levelDb(await resample(tone(hz, rate, 1), rate)));
      }
      expect(Math.max(...levels)).toBeLessThan(-120);
    });

    it(`${rate} Hz: passes tones up to 6.7 kHz unchanged and unshifted`, async () => {
      for (const hz of [50, 300, 1000, 2500, 4000, 5500, 6200, 6700]) {
        const { gainDb, phase } = toneResponse(await resample(tone(hz, rate, 1.5), rate), hz);
        expect(Math.abs(gainDb), `${hz} Hz`).toBeLessThan(1e-4);
        expect(Math.abs(phase), `${hz} Hz`).toBeLessThan(1e-5);
      }
    });
  }

  it('rolls off between 6.7 and 8 kHz as libsamplerate medium does', async () => {
    for (const hz of [7000, 7200, 7400]) {
      const input = tone(hz, 48000, 1.5);
      const ours = toneResponse(await resample(input, 48000), hz).gainDb;
      const theirs = toneResponse(await resample(input, 48000, { engine: 'libsamplerate' }), hz).gainDb;
      expect(Math.abs(ours - theirs), `${hz} Hz: ${ours} vs ${theirs} dB`).toBeLessThan(0.5);
    }
  });

  it('upsamples 8 kHz without images', async () => {
    const output = await resample(tone(1000, 8000, 1.5), 8000);
    expect(Math.abs(toneResponse(output, 1000).gainDb)).toBeLessThan(1e-4);
    // Whatever is not the 1 kHz tone (its images sit at 7 and 9 kHz before filtering) is noise.
    const { gainDb, phase } = toneResponse(output, 1000);
    const amplitude = 10 ** (gainDb / 20);
    let residual = 0;
    for (let k = 4000; k < 4000 + TARGET; k++)
      residual += (output[k]! - amplitude * Math.sin((2 * Math.PI * 1000 * k) / TARGET + phase)) ** 2;
    expect(10 * Math.log10(residual / TARGET / 0.5)).toBeLessThan(-120);
  });

  it('gives the same output however the input is cut into pieces', async () => {
    for (const rate of [48000, 44100, 8000, 11025]) {
      const input = Float32Array.from({ length: rate * 2 + 37 }, (_, n) => Math.sin(n * 0.01) * 0.5 + Math.sin(n * 1.3) * 0.2);
      const whole = await resample(input, rate);
      for (const pieces of [[1], [7, 960, 0, 4093, 3], [rate]]) {
        const streamed = await resample(input, rate, { pieces });
        expect(streamed.length).toBe(whole.length);
        expect(Buffer.from(streamed.buffer).equals(Buffer.from(whole.buffer)), `${rate} Hz in pieces of ${pieces}`).toBe(true);
      }
    }
  });

  it('outputs exactly round(input × 16000 / rate) samples, as before', async () => {
    for (const rate of [...COMMON_RATES, 44101]) {
      for (const frames of [1, 2, 3, 5, 100, 441, 1001, 44101, rate + 1]) {
        const output = await resample(new Float32Array(frames).fill(0.25), rate);
        expect(output.length, `${frames} frames at ${rate} Hz`).toBe(Math.round(frames * (TARGET / rate)));
      }
    }
  });

  describe('on real speech, against libsamplerate SRC_SINC_MEDIUM_QUALITY', () => {
    for (const [rate, codec, fixtures] of [
      [48000, 'opus', [OTHER.opusA, OTHER.opusB, OTHER.opusC]],
      [44100, 'flac', [OTHER.flac44k]],
    ] as const) {
      it(`${rate} Hz ${codec}: differs by less than -55 dB of the signal`, async () => {
        for (const fixture of fixtures) {
          const file = readAudioFixture(fixture);
          const decoded = await (decode as unknown as (bytes: Uint8Array) => Promise<{ channelData: Float32Array[]; sampleRate: number }>)(
            file,
          );
          expect(decoded.sampleRate).toBe(rate);
          const input = decoded.channelData[0]!;
          const ours = await resample(input, rate, { pieces: [4800] });
          const theirs = await resample(input, rate, { engine: 'libsamplerate', pieces: [4800] });
          expect(ours.length).toBe(theirs.length);
          let signal = 0;
          let error = 0;
          for (let k = 0; k < ours.length; k++) {
            signal += theirs[k]! ** 2;
            error += (ours[k]! - theirs[k]!) ** 2;
          }
          expect(10 * Math.log10(error / signal), fixture.file).toBeLessThan(-55);
        }
      });
    }
  });
});
