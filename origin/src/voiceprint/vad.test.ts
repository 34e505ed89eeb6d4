import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ProblemError } from '@vip/shared-schema/problem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeAudio } from './decode.js';
import { defaultPipelineLimits } from './engine.js';
import { loadBackend } from './onnx-runtime.js';
import type { VoiceprintPipeline } from './pipeline.js';
import { ffmpeg, requireFfmpeg, TempDir } from './test-support/encode.js';
import { fbankFixtureDir } from './test-support/fixtures.js';
import { standInPipeline } from './test-support/pipeline.js';
import { defaultVadOptions, SileroVad, segmentSpeech, sileroModelPath } from './vad.js';

const speechWav = path.join(fbankFixtureDir, 'c.wav');

describe('voice activity detection (Silero v5)', () => {
  const tmp = new TempDir();
  let vad: SileroVad;
  let pipeline: VoiceprintPipeline;

  beforeAll(async () => {
    requireFfmpeg();
    vad = await SileroVad.create(await loadBackend('web'));
    pipeline = await standInPipeline();
  });
  afterAll(async () => {
    await Promise.all([vad.release(), pipeline.release()]);
    tmp.remove();
  });

  it('runs the model shipped inside @ricky0123/vad-web', () => {
    expect(sileroModelPath).toMatch(/node_modules\/@ricky0123\/vad-web\/dist\/silero_vad_v5\.onnx$/);
  });

  it('counts the speech of a recording and ignores silence added around it', async () => {
    const bytes = new Uint8Array(readFileSync(speechWav));
    const plain = await vad.detect((await decodeAudio(bytes, defaultPipelineLimits)).samples);
    // Two seconds of silence before and three after the same speech.
    const padded = ffmpeg(speechWav, tmp.file('padded.wav'), ['-af', 'adelay=2000,apad=pad_dur=3']);
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

  for (const [name, filter] of [
    ['digital silence', 'anullsrc=r=16000:cl=mono'],
    ['white noise', 'anoisesrc=r=16000:color=white:amplitude=0.3'],
    ['a steady hum', 'sine=frequency=100:sample_rate=16000'],
  ] as const) {
    it(`finds no speech in ${name} -> no_speech`, async () => {
      const bytes = ffmpeg(filter, tmp.file(`${name.replace(/\W+/g, '-')}.wav`), ['-t', '4'], ['-f', 'lavfi']);
      const error = await pipeline.embedFile(bytes).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProblemError);
      expect((error as ProblemError).code).toBe('no_speech');
    });
  }

  it('a blip of speech in a long silence -> too_short', async () => {
    const bytes = ffmpeg(speechWav, tmp.file('blip.wav'), ['-af', 'atrim=0.45:1.05,adelay=1000,apad=pad_dur=2']);
    const error = await pipeline.embedFile(bytes).catch((caught: unknown) => caught);
    expect((error as ProblemError).code).toBe('too_short');
  });

  it('reports speech seconds, clipping and SNR as the enroll response quality', async () => {
    const result = await pipeline.embedFile(new Uint8Array(readFileSync(speechWav)));
    expect(result.quality.speech_seconds).toBeCloseTo(result.speechSeconds, 3);
    expect(result.quality.duration_seconds).toBeCloseTo(9.29, 2);
    expect(result.quality.clipping_ratio).toBe(0);
    expect(result.quality.snr_db).toBeGreaterThan(5);
    const noisy = ffmpeg(speechWav, tmp.file('noisy.wav'), [
      '-filter_complex',
      'anoisesrc=r=16000:color=white:amplitude=0.05[n];[0:a][n]amix=inputs=2:duration=first:normalize=0',
    ]);
    const noisyResult = await pipeline.embedFile(noisy);
    expect(noisyResult.quality.snr_db).toBeLessThan(result.quality.snr_db - 3);
  });
});
