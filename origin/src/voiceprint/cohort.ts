import path from 'node:path';
import { type ModelEntry, ModelIntegrityError, readVerifiedFile } from './manifest.js';

/**
 * Adaptive symmetric score normalization (AS-norm; docs/DECISIONS.md, "Score normalization"): each
 * side of a trial is scored against a cohort of public training speakers, and the mean and spread of
 * its `topK` highest cosines say how close strangers come to it. A cohort holds no enrolled user's
 * voice; tools/voiceprint-training/cohort.ts writes it beside the model.
 */
export interface Cohort {
  /** Unit rows, `dim` values each. */
  rows: Float32Array;
  dim: number;
  topK: number;
}

/** How close a side's nearest strangers come: the mean and standard deviation of its top-K cohort cosines. */
export interface CohortStats {
  mean: number;
  std: number;
}

/** The model's cohort file, refused unless its size and sha256 are the manifest's; null for a model without one. */
export function readVerifiedCohort(entry: ModelEntry, manifestDir: string): Cohort | null {
  if (!entry.cohort) return null;
  const what = `cohort of model "${entry.name}"`;
  const bytes = readVerifiedFile(what, path.join(manifestDir, entry.cohort.file), entry.cohort);
  if (bytes.length !== entry.cohort.rows * entry.dim * 4) {
    throw new ModelIntegrityError(`${what}: ${bytes.length} bytes are not ${entry.cohort.rows} rows of ${entry.dim} float32 values`);
  }
  const rows = new Float32Array(bytes.length / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < rows.length; i++) rows[i] = view.getFloat32(i * 4, true);
  return { rows, dim: entry.dim, topK: entry.cohort.top_k };
}

/** The top-K cohort cosines of an embedding, reduced to their mean and standard deviation. */
export function cohortStats(cohort: Cohort, embedding: Float32Array): CohortStats {
  const { rows, dim, topK } = cohort;
  const count = rows.length / dim;
  const norm = Math.hypot(...embedding);
  const cosines = new Float32Array(count);
  for (let row = 0; row < count; row++) {
    let dot = 0;
    const offset = row * dim;
    for (let i = 0; i < dim; i++) dot += rows[offset + i]! * embedding[i]!;
    cosines[row] = dot / norm;
  }
  const top = cosines.sort().subarray(count - topK);
  let sum = 0;
  for (const value of top) sum += value;
  const mean = sum / topK;
  let squares = 0;
  for (const value of top) squares += (value - mean) ** 2;
  return { mean, std: Math.sqrt(squares / topK) };
}

/** The cosine as a z-score against each side's nearest strangers, the two averaged. */
export function normalizedScore(cosine: number, a: CohortStats, b: CohortStats): number {
  return 0.5 * ((cosine - a.mean) / a.std + (cosine - b.mean) / b.std);
}
