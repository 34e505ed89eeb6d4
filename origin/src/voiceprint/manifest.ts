import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { calibrationSchema } from './operating-points.js';

const dimension = z.union([z.number().int().positive(), z.string().min(1)]);

const frontendSchema = z.object({
  sample_rate: z.literal(16000),
  num_mel_bins: z.number().int().positive(),
  frame_length_ms: z.number().positive(),
  frame_shift_ms: z.number().positive(),
  dither: z.literal(0),
  preemphasis: z.number().min(0).max(1),
  remove_dc_offset: z.boolean(),
  snip_edges: z.literal(true),
  window_type: z.enum(['povey', 'hamming', 'hanning']),
  waveform_scale: z.number().positive(),
  cmn: z.boolean(),
});

/**
 * Embeddings of public training speakers that the model's scores are normalized against
 * (tools/voiceprint-training/cohort.ts writes them): unit float32 rows, little-endian, `rows` × the model's `dim`, in
 * a file beside the manifest.
 */
const cohortSchema = z.object({
  file: z.string().regex(/^[A-Za-z0-9._-]+\.cohort\.f32$/),
  bytes: z.number().int().positive(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  rows: z.number().int().positive(),
  speakers: z.number().int().positive(),
  /** Each speaker's longest recordings, at most this many. */
  per_speaker: z.number().int().positive(),
  /** How many of the closest cohort rows a side's mean and spread are taken over. */
  top_k: z.number().int().positive(),
  /** The command that wrote it, from the repository root. */
  made_by: z.string(),
});

const modelEntrySchema = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/),
  file: z.string().regex(/^[A-Za-z0-9._-]+\.onnx$/, 'a bare .onnx file name'),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().positive(),
  dim: z.number().int().positive(),
  input: z.object({ name: z.string(), shape: z.array(dimension) }),
  output: z.object({ name: z.string(), shape: z.array(dimension) }),
  frontend: frontendSchema,
  /** The 1:1 sample-vs-sample point on the cosine; the only point of a model without `calibration`. */
  threshold: z.number().min(-1).max(1),
  /** Per-condition calibration measured on dev/ (operating-points.ts); absent for an uncalibrated model. */
  calibration: calibrationSchema.optional(),
  cohort: cohortSchema.optional(),
  normalized_output: z.boolean(),
  source: z.enum(['bundled', 'fetch']),
  card: z.string(),
  url: z.url().optional(),
  /** ONNX metadata_props the file must carry (e.g. sherpa-onnx's sample_rate, output_dim). */
  metadata: z.record(z.string(), z.string()).optional(),
});

const manifestSchema = z.object({ models: z.array(modelEntrySchema).min(1) });

export type ModelEntry = z.infer<typeof modelEntrySchema>;
export type Manifest = z.infer<typeof manifestSchema>;

export const bundledManifestPath = path.join(path.dirname(fileURLToPath(import.meta.url)), 'models', 'manifest.json');

export function readManifest(file: string): Manifest {
  return manifestSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

export interface ModelLocations {
  /** Folder of the manifest: bundled models live beside it. */
  manifestDir: string;
  /** Where `npm run model:fetch` puts downloaded models. */
  modelsDir: string;
}

/** Where the engine looks by default: bundled and fetched files both beside the bundled manifest. */
export const bundledModelLocations: ModelLocations = {
  manifestDir: path.dirname(bundledManifestPath),
  modelsDir: path.dirname(bundledManifestPath),
};

export function modelPath(entry: ModelEntry, locations: ModelLocations): string {
  return path.join(entry.source === 'bundled' ? locations.manifestDir : locations.modelsDir, entry.file);
}

/**
 * The model the engine runs: the one asked for by name, else the first fetched model whose file is
 * present (the production model, once `model:fetch` ran), else the first bundled one.
 */
export function selectModel(manifest: Manifest, locations: ModelLocations, requested?: string): ModelEntry {
  if (requested) {
    const entry = manifest.models.find((model) => model.name === requested);
    if (!entry) throw new Error(`model "${requested}" is not in the manifest`);
    return entry;
  }
  const fetched = manifest.models.find((model) => model.source === 'fetch' && existsSync(modelPath(model, locations)));
  const bundled = manifest.models.find((model) => model.source === 'bundled');
  const entry = fetched ?? bundled;
  if (!entry) throw new Error('the manifest has no bundled model and no fetched model is present');
  return entry;
}

export class ModelIntegrityError extends Error {
  override name = 'ModelIntegrityError';
}

/**
 * Reads a file the manifest describes and refuses it unless its size and sha256 are the manifest's;
 * `what` names it in the error (`model "x"`, `cohort of model "x"`).
 */
export function readVerifiedFile(what: string, file: string, expected: { bytes: number; sha256: string }): Uint8Array {
  if (!existsSync(file)) throw new ModelIntegrityError(`${what}: ${file} is missing`);
  const bytes = new Uint8Array(readFileSync(file));
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (bytes.length !== expected.bytes || sha256 !== expected.sha256) {
    throw new ModelIntegrityError(
      `${what}: ${file} is ${bytes.length} bytes with sha256 ${sha256}; the manifest expects ${expected.bytes} bytes with sha256 ${expected.sha256}`,
    );
  }
  return bytes;
}

/** Reads a model file and refuses it unless its size and sha256 are the manifest's. */
export function readVerifiedModel(entry: ModelEntry, file: string): Uint8Array {
  return readVerifiedFile(`model "${entry.name}"`, file, entry);
}
