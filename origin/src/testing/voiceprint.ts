import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createVoiceprintEngine, type VoiceprintEngine } from '../voiceprint/index.js';
import { type Calibration, defaultSearchTargets, perPairRate, type SearchTargets } from '../voiceprint/operating-points.js';
import { readSpeechManifest, type SpeechRecording } from '../voiceprint/speech-manifest.js';
import { pcm16Wav, speechDir } from './fixtures.js';
import { shippedBundledModel, writeTestModels } from './stand-ins.js';

/** Models whose weights are trained: with a calibrated threshold, their same/different verdicts can be asserted. */
const TRAINED_MODELS = ['vip-speaker-v2', 'vip-speaker-v1', 'campplus-voxceleb'];

/**
 * One engine per test file (starting one takes seconds): the shipped model when its file is in
 * place, else the bundled stand-in (random weights, same contract) so the HTTP paths still run.
 */
export async function startTestEngine(
  options: { threads?: number; maxQueue?: number; searchTargets?: Partial<SearchTargets> } = {},
): Promise<VoiceprintEngine> {
  const settings = {
    threads: options.threads ?? 1,
    maxQueue: options.maxQueue ?? 16,
    backend: 'auto' as const,
    searchTargets: options.searchTargets,
  };
  if (shippedBundledModel()) return createVoiceprintEngine(settings);
  const { manifestPath, modelsDir } = writeTestModels(mkdtempSync(path.join(tmpdir(), 'vip-origin-models-')), { campplus: false });
  return createVoiceprintEngine({ ...settings, manifestPath, modelsDir });
}

/**
 * An engine on the stand-in model whose identity-conflict points are exactly `review` and `strict`
 * under the default search targets: its manifest carries a calibration whose same-speaker quantiles
 * put the review point at `review` and whose fitted impostor tail reaches the strict per-pair rate at
 * `strict`. Tests that put a voiceprint at a chosen cosine from an enrollment's can then land it
 * below, inside or above the review band.
 */
export async function startReviewBandEngine(points: { review: number; strict: number }): Promise<VoiceprintEngine> {
  const { manifestPath, modelsDir, manifest } = writeTestModels(mkdtempSync(path.join(tmpdir(), 'vip-review-models-')), {
    campplus: false,
  });
  const strictRate = perPairRate(defaultSearchTargets.conflictStrictFpir, defaultSearchTargets.designRegistrySize);
  // An exponential tail from 0, exceed·exp(−s/scale), solved for the strict cosine.
  const exceed = 0.02;
  const scale = points.strict / Math.log(exceed / strictRate);
  const condition = (verify: number) => ({
    llr: { bias: 0, w_score: 10, w_quality: 0, w_interaction: 0 },
    verify,
    impostor_tail: { from: 0, exceed, scale, shape: 0 },
    genuine_quantiles: [
      [0.001, points.review],
      [0.5, points.review],
    ] as Array<[number, number]>,
  });
  const calibration: Calibration = {
    dataset: 'test: review band',
    sample_vs_sample: condition(0.3),
    sample_vs_enrolled: condition(0.3),
    enrollment_vs_enrollment: condition(Math.min(0.3, points.review)),
  };
  const models = manifest.models.map((model) => (model.source === 'bundled' ? { ...model, calibration } : model));
  writeFileSync(manifestPath, JSON.stringify({ models }, null, 2));
  return createVoiceprintEngine({ threads: 1, maxQueue: 16, backend: 'auto', manifestPath, modelsDir });
}

/**
 * Whether speaker verdicts mean anything: a trained model with a calibration. A stand-in has random
 * weights and no calibration; with it, tests assert the shape of the answers only.
 */
export const hasCalibratedModel = (engine: VoiceprintEngine): boolean =>
  TRAINED_MODELS.includes(engine.model.name) && engine.model.calibration !== undefined;

let speechManifest: SpeechRecording[] | undefined;

/** A speaker's recordings in the committed speech fixtures (`so762:SPEAKER9622`), longest first, as bytes. */
export function speakerRecordings(speaker: string, from: number, count: number): Uint8Array[] {
  speechManifest ??= readSpeechManifest(speechDir);
  const files = speechManifest
    .filter((file) => file.speaker === speaker)
    .sort((a, b) => b.seconds - a.seconds || a.path.localeCompare(b.path));
  if (files.length < from + count) throw new Error(`${speaker} has ${files.length} recordings, not ${from + count}`);
  return files.slice(from, from + count).map((file) => new Uint8Array(readFileSync(path.join(speechDir, file.path))));
}

/** A 16 kHz mono PCM16 WAV of silence: decodes fine, holds no speech. */
export const silentWav = (seconds: number): Uint8Array => pcm16Wav(new Float32Array(Math.round(seconds * 16000)));

/** Multipart form for app.inject: files as Blobs under their field names, then text fields. */
export function audioForm(files: Record<string, Uint8Array | Uint8Array[]>, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(files)) {
    for (const [index, bytes] of [value].flat().entries()) form.append(name, new Blob([bytes]), `${name}-${index}.audio`);
  }
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}

/** A JSON array of 16 or more numbers: what a leaked embedding would look like in a body or a log line. */
export const EMBEDDING_LIKE = /\[\s*-?\d+(\.\d+)?(e-?\d+)?(\s*,\s*-?\d+(\.\d+)?(e-?\d+)?){15,}\s*\]/i;
