import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ProblemError } from '@vip/shared-schema/problem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fbankFixtureDir, padWithSilence, pcm16Wav, readPcm16Wav } from '../testing/fixtures.js';
import { standInPipeline } from '../testing/stand-in-pipeline.js';
import { decodeAudio } from './decode.js';
import { defaultPipelineLimits } from './engine.js';
import { loadBackend } from './onnx-runtime.js';
import type { VoiceprintPipeline } from './pipeline.js';
import { defaultVadOptions, SileroVad, segmentSpeech, sileroModelPath } from './vad.js';

const speechWav = path.join(fbankFixtureDir, 'c.wav');
const speech = readPcm16Wav(speechWav);

/** `seconds` of 16 kHz samples from `sample(i)`. */
const signal = (seconds: number, sample: (i: number) => number) =>
  Float32Array.from({ length: Math.round(seconds * 16000) }, (_, i) => sample(i));

/** Uniform white noise in [-amplitude, amplitude], the same on every run. */
function whiteNoise(seconds: number, amplitude: number): Float32Array {
  let state = 20261124;
  return signal(seconds, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 2 ** 31 - 1) * amplitude;
  });
}

describe('voice activity detection (Silero v5)', () => {
  let vad: SileroVad;
  let pipeline: VoiceprintPipeline;

  beforeAll(async () => {
    vad = await SileroVad.create(await loadBackend('web'));
    pipeline = await standInPipeline();
  });
  afterAll(async () => {
    await Promise.all([vad.release(), pipeline.release()]);
  });

  it('runs the model shipped inside @ricky0123/vad-web', () => {
    expect(sileroModelPath).toMatch(/node_modules\/@ricky0123\/vad-web\/dist\/silero_vad_v5\.onnx$/);
  });

  it('counts the speech of a recording and ignores silence added around it', async () => {
    const bytes = new Uint8Array(readFileSync(speechWav));
    const plain = await vad.detect((await decodeAudio(bytes, defaultPipelineLimits)).samples);
    // Two seconds of silence before and three after the same speech.
    const padded = pcm16Wav(padWithSilence(speech, 2, 3));
    const paddedAudio = await decodeAudio(padded, defaultPipelineLimits);
    const result = await vad.detect(paddedAudio.samples);
    const speechOnlySeconds = paddedAudio.durationSeconds - 5;
    expect(result.speechSeconds).toBeGreaterThan(0.7 * speechOnlySeconds);
    expect(result.speechSeconds).toBeLessThanOrEqual(speechOnlySeconds);
    expect(Math.abs(result.speechSeconds - plain.speechSeconds)).toBeLessThan(0.2);
    expect(result.segments[0]!.start / 16000).toBeGreaterThan(2);
    expect(result.speech.length).toBeLessThan(paddedAudio.samples.length - 4 * 16000);
  });

  it('bridges short pauses and drops blips (hysteresis, minimum lengths)', () => {
    const probabilities = Float32Array.from([
      0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.1, 0.9, 0.9, 0.9, 0.9, 0, 0, 0, 0, 0.9, 0, 0, 0, 0,
    ]);
    expect(segmentSpeech(probabilities, defaultVadOptions)).toEqual([{ start: 1, end: 14 }]);
  });

  for (const [name, samples] of [
    ['digital silence', new Float32Array(4 * 16000)],
    ['white noise', whiteNoise(4, 0.3)],
    ['a steady hum', signal(4, (i) => Math.sin((2 * Math.PI * 100 * i) / 16000) / 8)],
  ] as const) {
    it(`finds no speech in ${name} -> no_speech`, async () => {
      const bytes = pcm16Wav(samples);
      const error = await pipeline.embedFile(bytes).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProblemError);
      expect((error as ProblemError).code).toBe('no_speech');
    });
  }

  it('a blip of speech in a long silence -> too_short', async () => {
    // 0.6 s of the recording, with a second of silence before and two after.
    const bytes = pcm16Wav(padWithSilence(speech.subarray(0.45 * 16000, 1.05 * 16000), 1, 2));
    const error = await pipeline.embedFile(bytes).catch((caught: unknown) => caught);
    expect((error as ProblemError).code).toBe('too_short');
  });

  it('reports speech seconds, clipping and SNR as the enroll response quality', async () => {
    const result = await pipeline.embedFile(new Uint8Array(readFileSync(speechWav)));
    expect(result.quality.speech_seconds).toBeCloseTo(result.speechSeconds, 3);
    expect(result.quality.duration_seconds).toBeCloseTo(9.29, 2);
    expect(result.quality.clipping_ratio).toBe(0);
    expect(result.quality.snr_db).toBeGreaterThan(5);
    const noise = whiteNoise(speech.length / 16000, 0.05);
    const noisyResult = await pipeline.embedFile(pcm16Wav(speech.map((sample, i) => sample + noise[i]!)));
    expect(noisyResult.quality.snr_db).toBeLessThan(result.quality.snr_db - 3);
  });
});
