/**
 * What an exact re-enrollment scores: the recordings of an enrolled voice sent again by someone
 * else, after a lossy round trip (MP3 at 64 kbit/s, then 44.1 kHz), against the enrollment made from
 * the originals. It sets where an identity conflict is refused outright (docs/DECISIONS.md,
 * "Speaker decisions"):
 *
 *   npx tsx tools/voiceprint-training/duplicate-eval.ts [--speech DIR] [--model NAME] [--speakers 40] [--write]
 *
 * With --write (dev only, after `evaluate.ts --write`) the lowest cosine goes into the model's
 * calibration as `enrollment_vs_enrollment.exact_copy`. Needs ffmpeg (the round trip) and
 * evaluate.ts's cached embeddings of the originals.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { limits } from '@vip/shared-schema';
import { cohortStats, normalizedScore, readVerifiedCohort } from '../../origin/src/voiceprint/cohort.js';
import { createVoiceprintEngine } from '../../origin/src/voiceprint/index.js';
import { bundledManifestPath, bundledModelLocations, readManifest, selectModel } from '../../origin/src/voiceprint/manifest.js';
import { averageEmbeddings, cosine } from '../../origin/src/voiceprint/similarity.js';
import { type CachedRecording, embeddingCachePath, enrolledFrom, readEmbeddingCache } from './embedding-cache.js';

const flags = parseArgs({
  options: {
    speech: { type: 'string', default: '/work/shared/speech/dev' },
    model: { type: 'string' },
    speakers: { type: 'string', default: '40' },
    write: { type: 'boolean', default: false },
  },
}).values;

async function main() {
  const dir = resolve(flags.speech);
  const entry = selectModel(readManifest(bundledManifestPath), bundledModelLocations, flags.model);
  const recordings = readEmbeddingCache(embeddingCachePath(dir, entry));
  const bySpeaker = new Map<string, CachedRecording[]>();
  for (const recording of recordings) bySpeaker.set(recording.speaker, [...(bySpeaker.get(recording.speaker) ?? []), recording]);
  const chosen = [...bySpeaker.values()]
    .map((own) => own.sort((a, b) => b.speech_seconds - a.speech_seconds).slice(0, limits.enrollMaxFiles))
    .filter((own) => own.reduce((sum, r) => sum + r.speech_seconds, 0) >= limits.enrollMinSpeechSeconds)
    .sort((a, b) => a[0]!.speaker.localeCompare(b[0]!.speaker))
    .filter((_, i, all) => i % Math.max(1, Math.floor(all.length / Number(flags.speakers))) === 0);

  const scratch = mkdtempSync(join(tmpdir(), 'duplicate-eval-'));
  const engine = await createVoiceprintEngine({ threads: 2, maxQueue: 10_000, model: entry.name });
  const scores: number[] = [];
  // What the same copies score after AS-norm, where the model has a cohort (docs/DECISIONS.md, "Score normalization").
  const cohort = readVerifiedCohort(entry, bundledModelLocations.manifestDir);
  const normalized: number[] = [];
  try {
    for (const own of chosen) {
      const copies = await Promise.all(
        own.map(async (recording, i) => {
          const mp3 = join(scratch, `${i}.mp3`);
          const wav = join(scratch, `${i}.wav`);
          execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', join(dir, recording.path), '-b:a', '64k', mp3]);
          execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', mp3, '-ar', '44100', wav]);
          const result = await engine.embedFile(new Uint8Array(readFileSync(wav)));
          return result;
        }),
      );
      const original = enrolledFrom(entry.name, own);
      const copy = averageEmbeddings(copies);
      const similarity = cosine(original, copy);
      scores.push(similarity);
      if (cohort)
        normalized.push(normalizedScore(similarity, cohortStats(cohort, original.embedding), cohortStats(cohort, copy.embedding)));
    }
  } finally {
    await engine.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  const spread = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (share: number) => sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!.toFixed(4);
    return `lowest ${at(0)}, 5th percentile ${at(0.05)}, median ${at(0.5)}`;
  };
  console.log(`${entry.name}: ${scores.length} enrollments sent again after an MP3 round trip: cosine ${spread(scores)}`);
  if (normalized.length > 0) console.log(`the same after AS-norm against the model's cohort: ${spread(normalized)}`);
  if (flags.write) {
    const manifest = JSON.parse(readFileSync(bundledManifestPath, 'utf8')) as {
      models: Array<{ name: string; calibration?: Record<string, Record<string, unknown>> }>;
    };
    const conflict = manifest.models.find((model) => model.name === entry.name)?.calibration?.enrollment_vs_enrollment;
    if (!conflict) throw new Error(`model "${entry.name}" has no calibration: run evaluate.ts --write first`);
    conflict.exact_copy = Math.floor(Math.min(...scores) * 10_000) / 10_000;
    writeFileSync(bundledManifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    console.log(`wrote exact_copy ${conflict.exact_copy} into the calibration of ${entry.name}`);
  }
}

await main();
