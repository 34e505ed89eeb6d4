import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createVoiceprintEngine, type VoiceprintEngine } from '../voiceprint/index.js';
import { pcm16Wav, speechDir } from '../voiceprint/test-support/fixtures.js';
import { shippedBundledModel, writeTestModels } from '../voiceprint/test-support/stand-ins.js';

/** Models whose weights are trained: with a calibrated threshold, their same/different verdicts can be asserted. */
const TRAINED_MODELS = ['vip-speaker-v1', 'campplus-voxceleb'];

/**
 * One engine per test file (starting one takes seconds): the shipped model when its file is in
 * place, else the bundled stand-in (random weights, same contract) so the HTTP paths still run.
 */
export async function startTestEngine(options: { threads?: number; maxQueue?: number } = {}): Promise<VoiceprintEngine> {
  const settings = { threads: options.threads ?? 1, maxQueue: options.maxQueue ?? 16, backend: 'auto' as const };
  if (shippedBundledModel()) return createVoiceprintEngine(settings);
  const { manifestPath, modelsDir } = writeTestModels(mkdtempSync(path.join(tmpdir(), 'vip-origin-models-')), { campplus: false });
  return createVoiceprintEngine({ ...settings, manifestPath, modelsDir });
}

/**
 * Whether speaker verdicts mean anything: a trained model with a calibrated threshold. The bundled
 * model ships with threshold 0 until it is calibrated, and a stand-in has random weights; with
 * either, tests assert the shape of the answers only.
 */
export const hasCalibratedModel = (engine: VoiceprintEngine): boolean =>
  TRAINED_MODELS.includes(engine.model.name) && engine.threshold(engine.model.name) > 0;

interface SpeechFile {
  path: string;
  speaker: string;
  seconds: number;
}

let speechManifest: SpeechFile[] | undefined;

/** A speaker's recordings in the committed speech fixtures (`so762:SPEAKER9622`), longest first, as bytes. */
export function speakerRecordings(speaker: string, from: number, count: number): Uint8Array[] {
  speechManifest ??= readFileSync(path.join(speechDir, 'manifest.tsv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [file, , id, seconds] = line.split('\t');
      return { path: file!, speaker: id!, seconds: Number(seconds) };
    });
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
