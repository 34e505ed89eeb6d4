/**
 * The cohort a model's scores are normalized against (adaptive score normalization, docs/DECISIONS.md
 * "Score normalization"): embeddings of public training speakers, never an enrolled user's.
 *
 *   npx tsx tools/voiceprint-training/cohort.ts [--speech DIR] [--model NAME] [--embed-per-speaker 3]
 *       [--write --per-speaker P --top-k K]
 *
 * 1. Embeds each speaker's `--embed-per-speaker` longest recordings of DIR (default
 *    /work/shared/speech/train, by the manifest's seconds) through the service's own pipeline, cached
 *    under work/ as evaluate.ts caches dev, and prints the cache's path. `calibrate.py DEV_CACHE
 *    --cohort-sweep THAT_CACHE` measures on dev which cohort and top-K normalize best.
 * 2. With --write: the P longest of each speaker that the pipeline accepted, as unit float32 rows
 *    (little-endian, speakers in name order, longest recording first), go to
 *    models/<model>.cohort.f32 and the model's manifest entry gains `cohort` (file, size, sha256,
 *    rows, speakers, top_k and this command).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { bundledManifestPath, bundledModelLocations, readManifest, selectModel } from '../../origin/src/voiceprint/manifest.js';
import { readSpeechManifest, type SpeechRecording } from '../../origin/src/voiceprint/speech-manifest.js';
import { type CachedRecording, embeddingCachePath, embedRecordings, readEmbeddingCache, TRAINING_WORK } from './embedding-cache.js';

const flags = parseArgs({
  options: {
    speech: { type: 'string', default: '/work/shared/speech/train' },
    model: { type: 'string' },
    'embed-per-speaker': { type: 'string', default: '3' },
    write: { type: 'boolean', default: false },
    'per-speaker': { type: 'string' },
    'top-k': { type: 'string' },
  },
}).values;

function positiveInteger(flag: string, value: string | undefined): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new Error(`--${flag} needs a positive whole number, not "${value}"`);
  return number;
}

/** Each speaker's `count` first recordings in `order`, speakers in name order. */
function firstOfEachSpeaker<T extends { speaker: string }>(recordings: readonly T[], count: number, order: (a: T, b: T) => number): T[] {
  const bySpeaker = new Map<string, T[]>();
  for (const recording of recordings) bySpeaker.set(recording.speaker, [...(bySpeaker.get(recording.speaker) ?? []), recording]);
  return [...bySpeaker.keys()].sort().flatMap((speaker) => bySpeaker.get(speaker)!.sort(order).slice(0, count));
}

const longestByManifest = (a: SpeechRecording, b: SpeechRecording) => b.seconds - a.seconds || a.path.localeCompare(b.path);
const longestBySpeech = (a: CachedRecording, b: CachedRecording) => b.speech_seconds - a.speech_seconds || a.path.localeCompare(b.path);

function writeCohort(rows: readonly CachedRecording[], modelName: string, perSpeaker: number, topK: number, command: string) {
  const dim = rows[0]?.embedding.length ?? 0;
  const matrix = new Float32Array(rows.length * dim);
  rows.forEach((row, i) => {
    const norm = Math.hypot(...row.embedding);
    row.embedding.forEach((value, j) => {
      matrix[i * dim + j] = value / norm;
    });
  });
  const bytes = new Uint8Array(matrix.buffer);
  const manifest = JSON.parse(readFileSync(bundledManifestPath, 'utf8')) as { models: Array<Record<string, unknown>> };
  const entry = manifest.models.find((model) => model.name === modelName)!;
  const file = `${modelName}.cohort.f32`;
  const speakers = new Set(rows.map((row) => row.speaker)).size;
  writeFileSync(join(bundledModelLocations.manifestDir, file), bytes);
  entry.cohort = {
    file,
    bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    rows: rows.length,
    speakers,
    per_speaker: perSpeaker,
    top_k: topK,
    made_by: command,
  };
  writeFileSync(bundledManifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  // The manifest's own schema checks what was just written.
  readManifest(bundledManifestPath);
  console.log(`wrote ${rows.length} rows of ${speakers} speakers to models/${file}`);
}

async function main() {
  const dir = resolve(flags.speech);
  const embedPerSpeaker = positiveInteger('embed-per-speaker', flags['embed-per-speaker']);
  const entry = selectModel(readManifest(bundledManifestPath), bundledModelLocations, flags.model);
  mkdirSync(TRAINING_WORK, { recursive: true });
  const cache = embeddingCachePath(dir, entry, `longest ${embedPerSpeaker} per speaker`);
  if (!existsSync(cache)) {
    await embedRecordings(dir, firstOfEachSpeaker(readSpeechManifest(dir), embedPerSpeaker, longestByManifest), entry.name, cache);
  }
  console.log(cache);
  if (!flags.write) return;
  const perSpeaker = positiveInteger('per-speaker', flags['per-speaker']);
  const topK = positiveInteger('top-k', flags['top-k']);
  if (perSpeaker > embedPerSpeaker) throw new Error(`--per-speaker ${perSpeaker} is more than the ${embedPerSpeaker} embedded`);
  const rows = firstOfEachSpeaker(readEmbeddingCache(cache), perSpeaker, longestBySpeech);
  const command =
    `npx tsx tools/voiceprint-training/cohort.ts --speech ${relative(process.cwd(), dir)} --model ${entry.name} ` +
    `--embed-per-speaker ${embedPerSpeaker} --write --per-speaker ${perSpeaker} --top-k ${topK}`;
  writeCohort(rows, entry.name, perSpeaker, topK, command);
}

await main();
