import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ModelEntry } from '../manifest.js';
import { averageEmbeddings, type TaggedEmbedding } from '../similarity.js';

/** evaluate.ts's cache of a speech folder's embeddings through the service's pipeline, one per model file. */
export interface CachedRecording {
  path: string;
  set: string;
  speaker: string;
  speech_seconds: number;
  embedding: number[];
}

export const TRAINING_WORK = join(dirname(fileURLToPath(import.meta.url)), 'work');

/** Keyed on the folder and the model file, so writing a calibration does not invalidate it. */
export function embeddingCachePath(speechDir: string, entry: ModelEntry): string {
  const key = createHash('sha256').update(`${speechDir}\0${entry.sha256}`).digest('hex').slice(0, 12);
  return join(TRAINING_WORK, `embeddings-${key}.json`);
}

export function readEmbeddingCache(file: string): CachedRecording[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { recordings: CachedRecording[] }).recordings;
}

/** Cached recordings combined as the service combines an enrollment's files (similarity.ts averageEmbeddings). */
export function enrolledFrom(model: string, recordings: readonly CachedRecording[]): TaggedEmbedding {
  return averageEmbeddings(
    recordings.map((recording) => ({ model, embedding: Float32Array.from(recording.embedding), speechSeconds: recording.speech_seconds })),
  );
}
