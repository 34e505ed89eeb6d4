import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { InferenceSession } from 'onnxruntime-web';
import { beforeAll, describe, expect, it } from 'vitest';
import { OTHER_AUDIO_FIXTURES as OTHER } from '../testing/audio-fixtures.js';
import { readAudioFixture, speechDir } from '../testing/fixtures.js';
import { shippedBundledModel, standInDir, vipStandInEntry, vipStandInFile } from '../testing/stand-ins.js';
import { decodeAudio } from './decode.js';
import { defaultPipelineLimits } from './engine.js';
import { bundledManifestPath } from './manifest.js';
import { type BackendName, loadBackend, type OrtBackend } from './onnx-runtime.js';
import { SpeakerModel } from './speaker-model.js';
import { defaultVadOptions, SileroVad, segmentSpeech, sileroModelPath, VAD_FRAME_SAMPLES } from './vad.js';

/**
 * The pipeline as it was before the polyphase resampler and the Scan-wrapped VAD: libsamplerate
 * medium, and the plain Silero model run once per frame. The current path must give the same VAD
 * decisions exactly and, end to end, the same embeddings.
 */
async function perFrameProbabilities(backend: OrtBackend, session: InferenceSession, samples: Float32Array): Promise<Float32Array> {
  const { Tensor } = backend.ort;
  const frames = Math.floor(samples.length / VAD_FRAME_SAMPLES);
  const probabilities = new Float32Array(frames);
  const sr = new Tensor('int64', BigInt64Array.from([16000n]), []);
  let state = new Tensor('float32', new Float32Array(256), [2, 1, 128]);
  for (let frame = 0; frame < frames; frame++) {
    const start = frame * VAD_FRAME_SAMPLES;
    const input = new Float32Array(64 + VAD_FRAME_SAMPLES);
    if (start > 0) input.set(samples.subarray(start - 64, start), 0);
    input.set(samples.subarray(start, start + VAD_FRAME_SAMPLES), 64);
    const outputs = await session.run({ input: new Tensor('float32', input, [1, input.length]), state, sr });
    probabilities[frame] = (outputs.output!.data as Float32Array)[0]!;
    state = outputs.stateN as typeof state;
  }
  return probabilities;
}

function extractPadded(samples: Float32Array, probabilities: Float32Array): Float32Array {
  const pad = Math.round((defaultVadOptions.padMs * 16000) / 1000);
  const parts: Float32Array[] = [];
  let lastEnd = 0;
  for (const segment of segmentSpeech(probabilities, defaultVadOptions)) {
    const start = Math.max(lastEnd, segment.start * VAD_FRAME_SAMPLES - pad);
    const end = Math.min(samples.length, segment.end * VAD_FRAME_SAMPLES + pad);
    parts.push(samples.subarray(start, end));
    lastEnd = end;
  }
  const speech = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    speech.set(part, offset);
    offset += part.length;
  }
  return speech;
}

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);

describe('the voiceprint path against the previous one (libsamplerate, one Silero run per frame)', () => {
  // The reference recordings as 48 kHz Opus and 44.1 kHz FLAC uploads.
  const uploads = [OTHER.opusA, OTHER.opusB, OTHER.opusC, OTHER.flac44k].map((fixture) => ({
    name: fixture.file,
    bytes: readAudioFixture(fixture),
  }));

  beforeAll(() => {
    // Real speech from the dev set (16 kHz sources, Opus, decoded at 48 kHz).
    const devRoot = path.join(speechDir, 'so762');
    for (const speaker of readdirSync(devRoot).sort().slice(0, 3)) {
      const file = readdirSync(path.join(devRoot, speaker)).sort()[0]!;
      uploads.push({ name: `dev ${speaker}/${file}`, bytes: new Uint8Array(readFileSync(path.join(devRoot, speaker, file))) });
    }
  });
  for (const backendName of ['web', 'node'] as BackendName[]) {
    it(`${backendName}: the same VAD probabilities bit for bit, and embeddings with cosine > 0.999`, async () => {
      const backend = await loadBackend(backendName);
      const shipped = shippedBundledModel();
      const dir = shipped ? path.dirname(bundledManifestPath) : standInDir();
      const entry = shipped ?? vipStandInEntry(dir);
      const model = await SpeakerModel.load(
        entry,
        new Uint8Array(readFileSync(path.join(dir, shipped ? entry.file : vipStandInFile))),
        backend,
      );
      const vad = await SileroVad.create(backend);
      const plainSilero = await backend.ort.InferenceSession.create(new Uint8Array(readFileSync(sileroModelPath)), backend.sessionOptions);
      try {
        for (const upload of uploads) {
          const current = await decodeAudio(upload.bytes, defaultPipelineLimits);
          const previous = await decodeAudio(upload.bytes, defaultPipelineLimits, { resampler: 'libsamplerate' });
          expect(current.samples.length).toBe(previous.samples.length);

          // The Scan-wrapped VAD is the per-frame loop, exactly.
          const probabilities = await vad.probabilities(current.samples);
          const reference = await perFrameProbabilities(backend, plainSilero, current.samples);
          expect(Buffer.from(probabilities.buffer).equals(Buffer.from(reference.buffer)), upload.name).toBe(true);

          // End to end: libsamplerate's samples through the per-frame VAD (which the Scan was just shown to equal).
          const result = await vad.detect(current.samples);
          const previousProbabilities = await vad.probabilities(previous.samples);
          const embedding = await model.embed(result.speech);
          const previousEmbedding = await model.embed(extractPadded(previous.samples, previousProbabilities));
          // Resampler differences under -55 dB (resample.test.ts) move a 48 kHz file's embedding by
          // up to about 2e-4 (cosine) with the shipped model: far inside the distance from the
          // threshold (0.38) to a same-speaker score.
          expect(cosine(embedding, previousEmbedding), upload.name).toBeGreaterThan(0.999);
        }
      } finally {
        await Promise.all([model.release(), vad.release(), plainSilero.release()]);
      }
    }, 180_000);
  }
});
