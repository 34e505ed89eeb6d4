/**
 * The watermark's evaluation (docs/WATERMARK.md): marks dev speech and synthetic speech, attacks the
 * marked files with ffmpeg, and prints the robustness matrix (payload recovered, per condition and per
 * set), the false-positive count on unmarked windows, and what the mark does to the audio (SNR,
 * silence, log-spectral distance). Not part of `npm test`: it needs ffmpeg, flite, festival and the
 * shared speech corpus.
 *
 *   npx tsx tools/watermark/evaluate.ts [--per-set 6] [--per-voice 5] [--only REGEX] [--false-positives 10000] [--skip-robustness] [--seed 1] [--record NAME]
 *
 * `--record NAME` also keeps what it prints, with the command, date and commit, as entry NAME of
 * docs/watermark-evaluation.json, which `npm run bench` renders into docs/BENCHMARKS.md (the
 * evaluation needs ffmpeg and ../shared, so the benches cannot run it themselves).
 */
import { parseArgs } from 'node:util';
import { concatSamples as concat } from '../../shared-schema/src/testing/speech-like.js';
import { detectWatermark } from '../../shared-schema/src/watermark/detect.js';
import { embedWatermark } from '../../shared-schema/src/watermark/embed.js';
import { logSpectralDistanceDb, silenceReport, snrDb } from '../../shared-schema/src/watermark/quality.js';
import { recordWatermarkEvaluation } from '../../test/bench/support/watermark-evaluation.js';
import { type Attacked, CONDITIONS } from './attacks.js';
import { throughFfmpeg } from './audio-io.js';
import { devSpeech, type SpeechFile, syntheticSpeech } from './corpus.js';
import { countFalsePositives } from './unmarked.js';

const KEY = 'vip-watermark-evaluation';
const MARKING_RATES = [16_000, 24_000, 22_050, 44_100, 48_000];
const sharedDir = process.env.VIP_SHARED_DIR ?? '/work/shared';
const cacheDir = process.env.VIP_WATERMARK_CACHE ?? '/tmp/vip-watermark-eval';

const { values } = parseArgs({
  options: {
    'per-set': { type: 'string', default: '6' },
    'per-voice': { type: 'string', default: '5' },
    only: { type: 'string' },
    'false-positives': { type: 'string', default: '0' },
    'skip-robustness': { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
    record: { type: 'string' },
  },
});

/** Every line printed, for --record. */
const printed: string[] = [];
function print(line = '') {
  console.log(line);
  printed.push(...line.split('\n'));
}

function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** A random 40-bit id, as the service would issue. */
const randomId = (random: () => number) => Array.from({ length: 10 }, () => Math.floor(random() * 16).toString(16)).join('');

interface Tally {
  ok: number;
  wrong: number;
  total: number;
}

function main() {
  const random = seededRandom(Number(values.seed));
  const only = values.only ? new RegExp(values.only, 'i') : null;
  if (!values['skip-robustness']) robustness(random, only);
  const windows = Number(values['false-positives']);
  if (windows > 0) {
    const started = performance.now();
    const report = countFalsePositives(KEY, windows, sharedDir, cacheDir, random);
    print(
      `\nFalse positives: ${report.found} payloads found in ${report.windows} unmarked windows (${report.seconds.toFixed(0)} s of audio, ${((performance.now() - started) / 1000).toFixed(0)} s)`,
    );
    for (const [source, row] of Object.entries(report.bySource)) {
      print(
        `  ${source.padEnd(34)} ${String(row.windows).padStart(6)} windows, ${row.found} found, ${row.gated} reached the decode gate (sync z ≥ 4), max z ${row.maxZ.toFixed(2)}`,
      );
    }
  }
}

function robustness(random: () => number, only: RegExp | null) {
  const started = performance.now();
  const sources: SpeechFile[] = [
    ...devSpeech(`${sharedDir}/speech/dev`, `${cacheDir}/dev`, Number(values['per-set']), 7),
    ...syntheticSpeech(`${cacheDir}/synthetic`, Number(values['per-voice'])),
  ];
  const extraConditions = [
    '5 s window of a longer marked file',
    'inserted between other audio',
    '3 s window of a longer marked file (informative)',
  ];
  const conditionNames = [...CONDITIONS.map((c) => c.name), ...extraConditions].filter((name) => !only || only.test(name));
  const tallies = new Map<string, Map<string, Tally>>();
  const count = (condition: string, set: string, ok: boolean, wrong: boolean) => {
    const row = tallies.get(condition) ?? new Map<string, Tally>();
    tallies.set(condition, row);
    for (const key of [set, set.split(':')[0]!, 'all']) {
      const tally = row.get(key) ?? { ok: 0, wrong: 0, total: 0 };
      tally.total++;
      if (ok) tally.ok++;
      if (wrong) tally.wrong++;
      row.set(key, tally);
    }
  };
  const quality = { snr: [] as number[], lsd: [] as number[], loudestSilent: Number.NEGATIVE_INFINITY, silentFrames: 0 };
  const byRate = new Map<number, Tally>();
  for (const [index, source] of sources.entries()) {
    const sampleRate = MARKING_RATES[index % MARKING_RATES.length]!;
    const atRate = (samples: Float32Array, rate: number) =>
      rate === sampleRate ? samples : throughFfmpeg(samples, rate, ['-ar', String(sampleRate), '-c:a', 'pcm_f32le'], 'wav', sampleRate);
    const original = atRate(source.samples, source.sampleRate);
    const other = sources[(index + 7) % sources.length]!;
    const otherAudio = atRate(other.samples, other.sampleRate);
    const id = randomId(random);
    const marked = embedWatermark(original, sampleRate, id, KEY);
    quality.snr.push(snrDb(original, marked));
    quality.lsd.push(logSpectralDistanceDb(original, marked, sampleRate));
    const silence = silenceReport(original, marked, sampleRate);
    quality.silentFrames += silence.silentFrames;
    quality.loudestSilent = Math.max(quality.loudestSilent, silence.loudestMarkedDbfs);
    const judge = (condition: string, attacked: Attacked) => {
      const result = detectWatermark(attacked.samples, attacked.sampleRate, KEY);
      const ok = result.found && result.id === id;
      count(condition, source.set, ok, result.found && result.id !== id);
      if (condition === CONDITIONS[0]!.name) {
        const tally = byRate.get(sampleRate) ?? { ok: 0, wrong: 0, total: 0 };
        tally.total++;
        if (ok) tally.ok++;
        byRate.set(sampleRate, tally);
      }
      if (!ok && process.env.VERBOSE)
        print(`  miss: ${condition} ${source.set} ${source.name} @${sampleRate} z=${result.syncZ.toFixed(1)}`);
    };
    for (const condition of CONDITIONS) {
      if (!conditionNames.includes(condition.name)) continue;
      judge(condition.name, condition.apply(marked, sampleRate, random));
    }
    if (conditionNames.some((name) => extraConditions.includes(name))) {
      const longMarked = embedWatermark(concat(original, otherAudio, original), sampleRate, id, KEY);
      for (const [name, seconds] of [
        [extraConditions[0]!, 5],
        [extraConditions[2]!, 3],
      ] as const) {
        if (!conditionNames.includes(name)) continue;
        const length = Math.round(seconds * sampleRate);
        const start = Math.floor(random() * (longMarked.length - length));
        judge(name, { samples: longMarked.slice(start, start + length), sampleRate });
      }
      if (conditionNames.includes(extraConditions[1]!)) {
        const before = otherAudio.subarray(0, Math.floor(otherAudio.length * (0.3 + 0.7 * random())));
        const after = otherAudio.subarray(Math.floor(otherAudio.length * random()));
        judge(extraConditions[1]!, { samples: concat(before, marked, after), sampleRate });
      }
    }
    process.stdout.write(`\r${index + 1}/${sources.length} files`);
  }
  print(
    `\n\nRobustness: payload recovered / files (${sources.length} files, marked at ${MARKING_RATES.join(', ')} Hz in turn; ${((performance.now() - started) / 1000).toFixed(0)} s)`,
  );
  const sets = [...new Set(sources.map((s) => s.set))];
  const columns = ['all', 'dev', 'synthetic'];
  print(`| condition | ${columns.join(' | ')} | wrong id |`);
  print(`|---|${columns.map(() => '---:').join('|')}|---:|`);
  const cell = (tally?: Tally) => (tally ? `${((100 * tally.ok) / tally.total).toFixed(1)} % (${tally.ok}/${tally.total})` : '');
  for (const condition of conditionNames) {
    const row = tallies.get(condition);
    if (!row) continue;
    const required = CONDITIONS.find((c) => c.name === condition)?.required ?? !condition.includes('informative');
    print(
      `| ${required ? '' : '(harder) '}${condition} | ${columns.map((c) => cell(row.get(c))).join(' | ')} | ${row.get('all')?.wrong ?? 0} |`,
    );
  }
  print('\nPer set (payload recovered, %):');
  print(`| condition | ${sets.join(' | ')} |`);
  print(`|---|${sets.map(() => '---:').join('|')}|`);
  for (const condition of conditionNames) {
    const row = tallies.get(condition);
    if (!row) continue;
    print(
      `| ${condition} | ${sets
        .map((s) => {
          const t = row.get(s);
          return t ? ((100 * t.ok) / t.total).toFixed(0) : '';
        })
        .join(' | ')} |`,
    );
  }
  print(`\nUntouched, by marking rate: ${[...byRate].map(([rate, t]) => `${rate} Hz ${t.ok}/${t.total}`).join(', ')}`);
  const sorted = [...quality.snr].sort((a, b) => a - b);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  print(
    `Audio: SNR min ${sorted[0]!.toFixed(1)} dB, median ${sorted[sorted.length >> 1]!.toFixed(1)} dB; log-spectral distance mean ${mean(quality.lsd).toFixed(2)} dB (max ${Math.max(...quality.lsd).toFixed(2)}); ${quality.silentFrames} silent 20 ms frames (< -60 dBFS), loudest after marking ${quality.loudestSilent.toFixed(1)} dBFS`,
  );
}

main();
if (values.record) {
  const path = recordWatermarkEvaluation(
    values.record,
    `npx tsx tools/watermark/evaluate.ts ${process.argv
      .slice(2)
      .map((arg) => (/[^\w.,=/-]/.test(arg) ? `'${arg.replaceAll("'", `'\\''`)}'` : arg))
      .join(' ')}`,
    printed,
  );
  console.log(`\nrecorded as "${values.record}" in ${path}`);
}
