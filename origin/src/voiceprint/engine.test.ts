import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ProblemError } from '@vip/shared-schema/problem';
import { signedWithAssertions, withFreeBoxes } from '@vip/shared-schema/testing/hostile-files';
import { platformSigner } from '@vip/shared-schema/testing/provenance-files';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fbankFixtureDir, pcm16Wav, readPcm16Wav } from '../testing/fixtures.js';
import { audioFixture } from '../testing/provenance-files.js';
import {
  campplusStandInFile,
  fileFacts,
  productionCampplusEntry,
  shippedBundledModel,
  standInDir,
  vipStandInFile,
  writeTestModels,
} from '../testing/stand-ins.js';
import { TempDir } from '../testing/temp-dir.js';
import { createVoiceprintEngine, type VoiceprintEngine } from './engine.js';
import { bundledManifestPath, type ModelEntry, ModelIntegrityError, readManifest } from './manifest.js';
import { readOnnxMetadata } from './onnx-metadata.js';
import { ModelContractError } from './speaker-model.js';

/** Tests that start engines compile wasm and spawn threads: minutes on a loaded 2-core CI box. */
const ENGINE_TEST_TIMEOUT_MS = 180_000;

const speech = (name: 'a' | 'b' | 'c') => new Uint8Array(readFileSync(path.join(fbankFixtureDir, `${name}.wav`)));

function maxAbsDifference(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

async function problemOf(promise: Promise<unknown>): Promise<ProblemError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProblemError);
  return error as ProblemError;
}

describe('voiceprint engine', () => {
  const tmp = new TempDir();
  afterAll(() => tmp.remove());

  describe('model selection from the manifest', () => {
    it(
      'prefers the fetched CAM++ model when its file is present, and loads the stand-in through that path',
      async () => {
        const models = writeTestModels(path.join(tmp.path, 'with-campplus'), { campplus: true });
        const engine = await createVoiceprintEngine({ ...models, backend: 'web', threads: 1 });
        try {
          expect(engine.model.name).toBe(productionCampplusEntry().name);
          expect(engine.model.dim).toBe(512);
          const result = await engine.embedFile(speech('c'));
          expect(result.model).toBe(engine.model.name);
          expect(result.embedding.length).toBe(512);
        } finally {
          await engine.close();
        }
      },
      ENGINE_TEST_TIMEOUT_MS,
    );

    it(
      'falls back to the bundled model when no fetched model is present',
      async () => {
        const models = writeTestModels(path.join(tmp.path, 'bundled-only'), { campplus: false });
        const engine = await createVoiceprintEngine({ ...models, backend: 'web', threads: 1 });
        try {
          expect(engine.model.source).toBe('bundled');
        } finally {
          await engine.close();
        }
      },
      ENGINE_TEST_TIMEOUT_MS,
    );

    it('refuses a model file whose sha256 is not the manifest one (the real CAM++ entry vs the stand-in file)', async () => {
      const models = writeTestModels(path.join(tmp.path, 'tampered'), { campplus: true, campplusFacts: 'production' });
      await expect(createVoiceprintEngine({ ...models, backend: 'web', threads: 1 })).rejects.toThrow(ModelIntegrityError);
    });

    it('refuses a file whose ONNX metadata contradicts the manifest', async () => {
      const models = writeTestModels(path.join(tmp.path, 'wrong-graph'), { campplus: false });
      // The bundled stand-in carries no sherpa-onnx metadata; dressed up as CAM++ it must be refused.
      const campplus = models.manifest.models[0]!;
      const impostor = path.join(models.modelsDir, campplus.file);
      copyFileSync(path.join(standInDir(), vipStandInFile), impostor);
      const manifestPath = path.join(tmp.path, 'wrong-graph', 'impostor.json');
      writeFileSync(manifestPath, JSON.stringify({ models: [{ ...campplus, ...fileFacts(impostor) }] }));
      await expect(createVoiceprintEngine({ manifestPath, modelsDir: models.modelsDir, backend: 'web', threads: 1 })).rejects.toThrow(
        ModelContractError,
      );
    });

    it('the CAM++ stand-in carries the names and metadata of the sherpa-onnx export', () => {
      const entry = productionCampplusEntry();
      const metadata = readOnnxMetadata(new Uint8Array(readFileSync(path.join(standInDir(), campplusStandInFile))));
      expect(metadata).toMatchObject(entry.metadata!);
      expect(entry.input.name).toBe('x');
      expect(entry.output.name).toBe('embedding');
      expect(entry.sha256).toBe('357a834f702b80161e5b981182c038e18553c1f2ca752ed6cec2052365d4129b');
      expect(entry.bytes).toBe(29_596_978);
    });

    it('the shipped manifest parses', () => {
      const names = readManifest(path.join(path.dirname(new URL(import.meta.url).pathname), 'models', 'manifest.json')).models.map(
        (m) => m.name,
      );
      expect(names).toContain(productionCampplusEntry().name);
    });
  });

  describe('backends', () => {
    it(
      'gives the same embeddings on onnxruntime-web and onnxruntime-node (within 1e-4), for both models',
      async () => {
        const models = writeTestModels(path.join(tmp.path, 'backends'), { campplus: true });
        for (const model of models.manifest.models.map((m) => m.name)) {
          const web = await createVoiceprintEngine({ ...models, model, backend: 'web', threads: 1 });
          const node = await createVoiceprintEngine({ ...models, model, backend: 'node', threads: 1 });
          try {
            expect(web.backend).toBe('web');
            expect(node.backend).toBe('node');
            for (const file of ['a', 'c'] as const) {
              const [fromWeb, fromNode] = await Promise.all([web.embedFile(speech(file)), node.embedFile(speech(file))]);
              expect(maxAbsDifference(fromWeb.embedding, fromNode.embedding), `${model} ${file}`).toBeLessThan(1e-4);
              expect(fromWeb.speechSeconds).toBeCloseTo(fromNode.speechSeconds, 2);
            }
          } finally {
            await Promise.all([web.close(), node.close()]);
          }
        }
      },
      ENGINE_TEST_TIMEOUT_MS,
    );
  });

  it.runIf(shippedBundledModel())(
    'gives the same embeddings on both runtimes for the shipped bundled model',
    async () => {
      const web = await createVoiceprintEngine({ model: shippedBundledModel()!.name, backend: 'web', threads: 1 });
      const node = await createVoiceprintEngine({ model: shippedBundledModel()!.name, backend: 'node', threads: 1 });
      try {
        const [fromWeb, fromNode] = await Promise.all([web.embedFile(speech('c')), node.embedFile(speech('c'))]);
        expect(maxAbsDifference(fromWeb.embedding, fromNode.embedding)).toBeLessThan(1e-4);
      } finally {
        await Promise.all([web.close(), node.close()]);
      }
    },
    ENGINE_TEST_TIMEOUT_MS,
  );

  describe('engine API', () => {
    let engine: VoiceprintEngine;
    let models: ReturnType<typeof writeTestModels>;

    beforeAll(async () => {
      models = writeTestModels(path.join(tmp.path, 'api'), { campplus: false });
      engine = await createVoiceprintEngine({
        ...models,
        backend: 'auto',
        threads: 2,
        maxQueue: 2,
        thresholds: { 'vip-speaker-stand-in': 0.61 },
      });
    }, ENGINE_TEST_TIMEOUT_MS);
    afterAll(() => engine.close());

    it('embeds a file into a unit vector tagged with its model, with speech seconds and quality', async () => {
      const result = await engine.embedFile(speech('c'));
      const norm = Math.sqrt(result.embedding.reduce((sum, value) => sum + value * value, 0));
      expect(norm).toBeCloseTo(1, 5);
      expect(result.model).toBe('vip-speaker-stand-in');
      expect(result.speechSeconds).toBeGreaterThan(5);
      expect(result.quality).toMatchObject({ speech_seconds: result.speechSeconds, clipping_ratio: 0 });
      expect(engine.cosine(result, result)).toBeCloseTo(1, 5);
      expect(engine.embeddingHash(result.embedding, result.model)).toMatch(/^sha256:[0-9a-f]{64}$/);
    });

    it('passes the bad-input code from the worker thread to the caller', async () => {
      expect((await problemOf(engine.embedFile(new TextEncoder().encode('hello')))).code).toBe('unsupported_format');
      expect((await problemOf(engine.embedFile(new Uint8Array(0)))).code).toBe('empty_audio');
    });

    it('refuses to compare embeddings of different models', async () => {
      const result = await engine.embedFile(speech('a'));
      const other = { embedding: result.embedding, model: 'campplus-voxceleb' };
      expect((await problemOf(Promise.resolve().then(() => engine.cosine(result, other)))).code).toBe('model_mismatch');
    });

    it('uses the single manifest threshold, overridable by setting, for models without a calibration', () => {
      expect(engine.points('vip-speaker-stand-in')).toEqual({
        sample_vs_sample: { verify: 0.61 },
        sample_vs_enrolled: { verify: 0.61, search: 0.61 },
        enrollment_vs_enrollment: { review: 0.61, strict: 0.61 },
      });
      expect(engine.points('campplus-voxceleb').sample_vs_sample.verify).toBe(0.5);
      expect(engine.score('vip-speaker-stand-in', 'sample_vs_sample', 0.9, 5)).toBeNull();
    });

    it(
      'enrolls from several files by averaging their embeddings, and wants 10 s of speech in all',
      async () => {
        const files = [speech('b'), speech('c')];
        const single = await Promise.all(files.map((file) => engine.embedFile(file)));
        const enrolled = await engine.embedMany(files);
        expect(enrolled.speechSeconds).toBeCloseTo(single[0]!.speechSeconds + single[1]!.speechSeconds, 3);
        expect(enrolled.speechSeconds).toBeGreaterThanOrEqual(10);
        expect(enrolled.quality.speech_seconds).toBeCloseTo(enrolled.speechSeconds, 2);
        expect(enrolled.quality.duration_seconds).toBeCloseTo(single[0]!.quality.duration_seconds + single[1]!.quality.duration_seconds, 2);
        for (const one of single)
          expect(engine.cosine(enrolled, one)).toBeGreaterThan(Math.min(engine.cosine(single[0]!, single[1]!), 0.99));
        expect((await problemOf(engine.embedMany([speech('c')]))).code).toBe('too_short');
        const withBadFile = await problemOf(engine.embedMany([speech('b'), new Uint8Array(10)]));
        expect(withBadFile.code).toBe('unsupported_format');
        expect(withBadFile.message).toMatch(/^\(file 2 of 2\): /);
      },
      ENGINE_TEST_TIMEOUT_MS,
    );

    it(
      'refuses work beyond its queue with unavailable and Retry-After',
      async () => {
        await until(() => engine.load().running === 0);
        // The 9.3 s recording six times over: each file keeps a thread busy long enough to fill the queue.
        const once = readPcm16Wav(path.join(fbankFixtureDir, 'c.wav'));
        const sixTimes = new Float32Array(6 * once.length);
        for (let i = 0; i < 6; i++) sixTimes.set(once, i * once.length);
        const long = pcm16Wav(sixTimes);
        const accepted = Array.from({ length: 4 }, () => engine.embedFile(long)); // two running, two queued
        const refused = await problemOf(engine.embedFile(long));
        expect(refused.code).toBe('unavailable');
        expect(refused.headers?.['Retry-After']).toBe('5');
        await Promise.all(accepted);
      },
      ENGINE_TEST_TIMEOUT_MS,
    );

    it('keeps the event loop free while files are processed', async () => {
      let worstLagMs = 0;
      let last = performance.now();
      const timer = setInterval(() => {
        const now = performance.now();
        worstLagMs = Math.max(worstLagMs, now - last - 5);
        last = now;
      }, 5);
      await Promise.all([engine.embedFile(speech('b')), engine.embedFile(speech('c'))]);
      clearInterval(timer);
      // Both files on the event loop would block it for seconds; scheduler noise on a busy box stays far below.
      expect(worstLagMs).toBeLessThan(250);
    });

    it(
      'replaces a thread that runs past its time limit',
      async () => {
        const slow = await createVoiceprintEngine({ ...models, backend: 'auto', threads: 1, taskTimeoutMs: 1 });
        try {
          expect((await problemOf(slow.embedFile(speech('c')))).code).toBe('unavailable');
          await new Promise((resolve) => setTimeout(resolve, 50));
          expect((await problemOf(slow.embedFile(new Uint8Array(0)))).code).toMatch(/empty_audio|unavailable/);
        } finally {
          await slow.close();
        }
      },
      ENGINE_TEST_TIMEOUT_MS,
    );
  });

  it(
    'reads Content Credentials in a pool thread, and kills and replaces a thread that overruns the read’s deadline',
    async () => {
      const models = writeTestModels(path.join(tmp.path, 'credentials'), { campplus: false });
      const { signer, caPem } = platformSigner('Deadline Test');
      const signed = await signedWithAssertions(audioFixture('a.pcm16.wav'), 'audio/wav', [], signer);
      const engine = await createVoiceprintEngine({ ...models, backend: 'auto', threads: 1 });
      const hurried = await createVoiceprintEngine({ ...models, backend: 'auto', threads: 1, credentialsTimeoutMs: 1 });
      try {
        expect(await engine.readCredentials(signed, 'audio/wav', caPem)).toMatchObject({ state: 'trusted', assertion_count: 1 });
        expect((await problemOf(engine.readCredentials(withFreeBoxes(audioFixture('a.m4a'), 100_000), 'audio/mp4', ''))).code).toBe(
          'payload_too_large',
        );
        // c2pa-rs takes longer than 1 ms (its WASM alone loads in 50 ms): the read is refused and its thread replaced.
        const overrun = await problemOf(hurried.readCredentials(signed, 'audio/wav', caPem));
        expect([overrun.code, overrun.message]).toEqual([
          'malformed_manifest',
          "The file's Content Credentials could not be read within 1 ms.",
        ]);
        // The one thread was killed; the next file runs on its replacement.
        expect((await hurried.embedFile(speech('c'))).speechSeconds).toBeGreaterThan(1);
      } finally {
        await Promise.all([engine.close(), hurried.close()]);
      }
    },
    ENGINE_TEST_TIMEOUT_MS,
  );

  it(
    'closes cleanly while files are mid-inference on onnxruntime-node (which aborts if its thread is killed)',
    async () => {
      const models = writeTestModels(path.join(tmp.path, 'closing'), { campplus: false });
      const engine = await createVoiceprintEngine({ ...models, backend: 'node', threads: 2 });
      const inFlight = Promise.allSettled([engine.embedFile(speech('c')), engine.embedFile(speech('b')), engine.embedFile(speech('a'))]);
      await new Promise((resolve) => setTimeout(resolve, 60));
      await engine.close();
      for (const outcome of await inFlight) {
        if (outcome.status === 'rejected') expect((outcome.reason as ProblemError).code).toBe('unavailable');
      }
      expect((await problemOf(engine.embedFile(speech('a')))).code).toBe('unavailable');
    },
    ENGINE_TEST_TIMEOUT_MS,
  );

  it('fails to start on a cohort that is not the manifest one, or a normalized calibration without a cohort', async () => {
    const bundledEntry = readManifest(bundledManifestPath).models.find((model) => model.cohort)!;
    const withModels = (name: string, change: (entry: ModelEntry) => ModelEntry) => {
      const models = writeTestModels(path.join(tmp.path, name), { campplus: false });
      const manifest = {
        models: models.manifest.models.map((model) => (model.source === 'bundled' ? change(model) : model)),
      };
      writeFileSync(models.manifestPath, JSON.stringify(manifest));
      return models;
    };
    // The shipped cohort's entry on the stand-in, with one byte of the file changed.
    const tampered = withModels('tampered-cohort', (entry) => ({ ...entry, cohort: bundledEntry.cohort }));
    const cohortBytes = readFileSync(path.join(path.dirname(bundledManifestPath), bundledEntry.cohort!.file));
    cohortBytes[100] = cohortBytes[100]! ^ 1;
    writeFileSync(path.join(path.dirname(tampered.manifestPath), bundledEntry.cohort!.file), cohortBytes);
    await expect(createVoiceprintEngine({ ...tampered, backend: 'web', threads: 1 })).rejects.toThrow(
      /cohort of model "vip-speaker-stand-in": .* with sha256 [0-9a-f]{64}; the manifest expects/,
    );
    // The shipped calibration (sample vs sample on normalized scores) on a model without a cohort.
    const noCohort = withModels('no-cohort', (entry) => ({ ...entry, calibration: bundledEntry.calibration }));
    await expect(createVoiceprintEngine({ ...noCohort, backend: 'web', threads: 1 })).rejects.toThrow(
      /decides on normalized scores but has no cohort/,
    );
  });

  it('fails to start when the model file is missing', async () => {
    const models = writeTestModels(path.join(tmp.path, 'missing'), { campplus: false });
    rmSync(path.join(path.dirname(models.manifestPath), vipStandInFile));
    await expect(createVoiceprintEngine({ ...models, backend: 'web', threads: 1 })).rejects.toThrow(ModelIntegrityError);
  });
});
