/**
 * Screening's hit rate by sample length, through the service's own pipeline:
 *
 *   npx tsx tools/voiceprint-training/screening-eval.ts [--speech DIR] [--model NAME] [--json FILE] [--write]
 *
 * Every speaker of DIR/manifest.tsv is enrolled from the first half of their recordings (alternately
 * by path, as calibrate.py's sample-vs-enrolled trials), as the service enrolls: the speech-weighted
 * mean of the files' unit embeddings, when the half holds the 10 s of speech enrollment needs. The
 * other half becomes screening samples: consecutive recordings joined into one file (0.25 s of
 * silence between them) until the sample holds at least 3, 5, 10 or 20 s of speech, each sample
 * embedded as one upload. The same recordings sent as separate files and combined as an enrollment
 * combines them are the "several recordings" row.
 *
 * A sample is found first when its own voice scores highest of all enrolled voices and at or above
 * the model's screening point (`sample_vs_enrolled.search`, FPIR 1 % at the design registry size).
 * False matches: the same search with the sample's own voice left out of the registry. Uses
 * evaluate.ts's cached per-recording embeddings (it runs `evaluate.ts --embed-only` when missing).
 * With --write (dev only) the report goes beside the model (models/<model>.screening.json) and
 * calibrate.py writes its table into the model card.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { limits } from '@vip/shared-schema';
import { pcm16Wav } from '../../origin/src/testing/fixtures.js';
import { decodeAudio } from '../../origin/src/voiceprint/decode.js';
import { createVoiceprintEngine, defaultPipelineLimits } from '../../origin/src/voiceprint/index.js';
import { bundledManifestPath, bundledModelLocations, readManifest, selectModel } from '../../origin/src/voiceprint/manifest.js';
import { defaultSearchTargets, operatingPoints } from '../../origin/src/voiceprint/operating-points.js';
import { cosine, type TaggedEmbedding } from '../../origin/src/voiceprint/similarity.js';
import { type CachedRecording, embeddingCachePath, enrolledFrom, readEmbeddingCache } from './embedding-cache.js';
import { keepReportBesideModel } from './model-card.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const SPEECH_TARGETS = [3, 5, 10, 20] as const;
const GAP_SECONDS = 0.25;
const SAMPLE_RATE = 16000;

const flags = parseArgs({
  options: {
    speech: { type: 'string', default: '/work/shared/speech/dev' },
    model: { type: 'string' },
    json: { type: 'string' },
    write: { type: 'boolean', default: false },
  },
}).values;

async function main() {
  const dir = resolve(flags.speech);
  const manifest = readManifest(bundledManifestPath);
  const entry = selectModel(manifest, bundledModelLocations, flags.model);
  if (!entry.calibration) throw new Error(`model "${entry.name}" has no calibration: run evaluate.ts --write first`);
  const cache = embeddingCachePath(dir, entry);
  if (!existsSync(cache)) {
    const args = ['tsx', join(HERE, 'evaluate.ts'), '--speech', dir, '--model', entry.name, '--embed-only'];
    if (spawnSync('npx', args, { stdio: 'inherit' }).status !== 0) throw new Error('evaluate.ts --embed-only failed');
  }
  const recordings = readEmbeddingCache(cache);
  const point = operatingPoints(entry.calibration, defaultSearchTargets).sample_vs_enrolled.search;

  const bySpeaker = new Map<string, CachedRecording[]>();
  for (const recording of recordings) bySpeaker.set(recording.speaker, [...(bySpeaker.get(recording.speaker) ?? []), recording]);
  const enrolled: Array<{ speaker: string; set: string; vector: TaggedEmbedding }> = [];
  const probeHalves = new Map<string, CachedRecording[]>();
  for (const [speaker, own] of [...bySpeaker].sort(([a], [b]) => a.localeCompare(b))) {
    own.sort((a, b) => a.path.localeCompare(b.path));
    const halfA = own.filter((_, i) => i % 2 === 0);
    probeHalves.set(
      speaker,
      own.filter((_, i) => i % 2 === 1),
    );
    if (halfA.reduce((sum, r) => sum + r.speech_seconds, 0) >= limits.enrollMinSpeechSeconds) {
      enrolled.push({ speaker, set: own[0]!.set, vector: enrolledFrom(entry.name, halfA) });
    }
  }

  // The decoders are not reentrant: one file at a time in this thread, while the engine's threads embed.
  let decoding: Promise<unknown> = Promise.resolve();
  const decodeInTurn = (paths: string[]) => {
    const decoded = decoding.then(async () => {
      const parts = [];
      for (const file of paths)
        parts.push(await decodeAudio(new Uint8Array(readFileSync(file)), { ...defaultPipelineLimits, maxSeconds: 600 }));
      return parts;
    });
    decoding = decoded.catch(() => undefined);
    return decoded;
  };
  // The service's two-minute deadline per file guards a server; this tool queues every sample at once
  // and decodes them on its own thread meanwhile, and a run on two busy cores was stopped by it.
  const engine = await createVoiceprintEngine({ threads: 2, maxQueue: 10_000, taskTimeoutMs: 600_000, model: entry.name });
  type Outcome = {
    set: string;
    target: number;
    kind: 'one_file' | 'several_files';
    speech: number;
    first: boolean;
    found: boolean;
    falseMatch: boolean;
  };
  const outcomes: Outcome[] = [];
  const judge = (speaker: string, set: string, target: number, kind: Outcome['kind'], speech: number, vector: TaggedEmbedding) => {
    let best = { speaker: '', score: -2 };
    let own = -2;
    let impostor = -2;
    for (const voice of enrolled) {
      const score = cosine(vector, voice.vector);
      if (score > best.score) best = { speaker: voice.speaker, score };
      if (voice.speaker === speaker) own = score;
      else impostor = Math.max(impostor, score);
    }
    outcomes.push({
      set,
      target,
      kind,
      speech,
      first: best.speaker === speaker && best.score >= point,
      found: own >= point,
      falseMatch: impostor >= point,
    });
  };
  try {
    const jobs: Promise<void>[] = [];
    for (const voice of enrolled) {
      const half = probeHalves.get(voice.speaker) ?? [];
      for (const target of SPEECH_TARGETS) {
        let group: CachedRecording[] = [];
        for (const recording of half) {
          group.push(recording);
          if (group.reduce((sum, r) => sum + r.speech_seconds, 0) < target) continue;
          const members = group;
          group = [];
          judge(
            voice.speaker,
            voice.set,
            target,
            'several_files',
            members.reduce((s, r) => s + r.speech_seconds, 0),
            enrolledFrom(entry.name, members),
          );
          jobs.push(
            (async () => {
              const parts = await decodeInTurn(members.map((r) => join(dir, r.path)));
              const gap = Math.round(GAP_SECONDS * SAMPLE_RATE);
              const joined = new Float32Array(parts.reduce((n, p) => n + p.samples.length + gap, 0));
              let at = 0;
              for (const part of parts) {
                joined.set(part.samples, at);
                at += part.samples.length + gap;
              }
              const sample = await engine.embedFile(pcm16Wav(joined));
              judge(voice.speaker, voice.set, target, 'one_file', sample.speechSeconds, sample);
            })(),
          );
        }
      }
    }
    await Promise.all(jobs);
  } finally {
    await engine.close();
  }

  const rows: Record<string, unknown>[] = [];
  for (const kind of ['one_file', 'several_files'] as const) {
    for (const target of SPEECH_TARGETS) {
      const these = outcomes.filter((o) => o.kind === kind && o.target === target);
      if (these.length === 0) continue;
      const pct = (n: number, of = these.length) => Math.round((1000 * n) / of) / 10;
      const sets = [...new Set(these.map((o) => o.set))].sort();
      rows.push({
        kind,
        speech_at_least_s: target,
        samples: these.length,
        found_first_pct: pct(these.filter((o) => o.first).length),
        found_pct: pct(these.filter((o) => o.found).length),
        false_match_pct: pct(these.filter((o) => o.falseMatch).length),
        found_first_by_set_pct: Object.fromEntries(
          sets.map((set) => {
            const inSet = these.filter((o) => o.set === set);
            return [set, `${pct(inSet.filter((o) => o.first).length, inSet.length)} (${inSet.length})`];
          }),
        ),
      });
    }
  }
  const report = { model: entry.name, speech: dir, screening_point: point, enrolled_voices: enrolled.length, rows };
  console.log(JSON.stringify(report, null, 2));
  if (flags.json) writeFileSync(flags.json, `${JSON.stringify(report, null, 2)}\n`);
  if (flags.write) keepReportBesideModel(entry.name, 'screening', report);
}

await main();
