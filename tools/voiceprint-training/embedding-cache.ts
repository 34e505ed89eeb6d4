import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProblemError } from '@vip/shared-schema/problem';
import { createVoiceprintEngine } from '../../origin/src/voiceprint/index.js';
import type { ModelEntry } from '../../origin/src/voiceprint/manifest.js';
import { averageEmbeddings, type TaggedEmbedding } from '../../origin/src/voiceprint/similarity.js';
import type { SpeechRecording } from '../../origin/src/voiceprint/speech-manifest.js';

/** evaluate.ts's cache of a speech folder's embeddings through the service's pipeline, one per model file. */
export interface CachedRecording {
  path: string;
  set: string;
  speaker: string;
  speech_seconds: number;
  embedding: number[];
}

export const TRAINING_WORK = join(dirname(fileURLToPath(import.meta.url)), 'work');

/**
 * Keyed on the folder and the model file, so writing a calibration does not invalidate it; `selection`
 * names a subset of the folder (cohort.ts embeds only each speaker's longest recordings).
 */
export function embeddingCachePath(speechDir: string, entry: ModelEntry, selection = ''): string {
  const named = selection ? `${speechDir}\0${entry.sha256}\0${selection}` : `${speechDir}\0${entry.sha256}`;
  const key = createHash('sha256').update(named).digest('hex').slice(0, 12);
  return join(TRAINING_WORK, `embeddings-${key}.json`);
}

/** What the cache keeps of a recording (its seconds come from the engine's speech detection instead). */
type Recording = Pick<SpeechRecording, 'path' | 'set' | 'speaker'>;

/**
 * Embeds recordings of a speech folder through the service's own pipeline (decode, resample, VAD,
 * fbank, ONNX: createVoiceprintEngine) and writes the cache; a recording the pipeline refuses (too
 * little speech, say) is listed with its problem code instead.
 */
export async function embedRecordings(dir: string, recordings: readonly Recording[], model: string, cache: string): Promise<void> {
  const engine = await createVoiceprintEngine({ threads: 2, maxQueue: 10_000, model });
  const rows: CachedRecording[] = [];
  const skipped: Array<Recording & { code: string }> = [];
  const started = Date.now();
  try {
    await Promise.all(
      recordings.map(async ({ path, set, speaker }) => {
        try {
          const result = await engine.embedFile(new Uint8Array(readFileSync(join(dir, path))));
          rows.push({ path, set, speaker, speech_seconds: result.speechSeconds, embedding: Array.from(result.embedding) });
        } catch (error) {
          if (!(error instanceof ProblemError)) throw error;
          skipped.push({ path, set, speaker, code: error.code });
        }
      }),
    );
  } finally {
    await engine.close();
  }
  rows.sort((a, b) => a.path.localeCompare(b.path));
  const seconds = (Date.now() - started) / 1000;
  console.log(`${model}: ${rows.length} recordings embedded in ${seconds.toFixed(0)} s, ${skipped.length} refused by the pipeline`);
  writeFileSync(cache, JSON.stringify({ model, speech: dir, recordings: rows, skipped }));
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
