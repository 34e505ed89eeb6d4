/**
 * The false-positive corpus: unmarked windows of every dev set, synthetic speech, speech marked under
 * another key, silence, noise, tones and music-like signals, each given to the detector; any payload
 * found is a false attribution.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DETECT_MIN_SYNC_Z, detectWatermark } from '../../shared-schema/src/watermark/detect.js';
import { embedWatermark } from '../../shared-schema/src/watermark/embed.js';
import { readAudio } from './audio-io.js';
import { syntheticSpeech } from './corpus.js';

export interface FalsePositiveReport {
  windows: number;
  found: number;
  seconds: number;
  bySource: Record<string, { windows: number; found: number; gated: number; maxZ: number }>;
}

type Window = { source: string; samples: Float32Array; sampleRate: number };

function* devUtterances(sharedDir: string, cacheDir: string): Generator<Window> {
  const devDir = join(sharedDir, 'speech/dev');
  const rows = readFileSync(join(devDir, 'manifest.tsv'), 'utf8').trim().split('\n').slice(1);
  for (const line of rows) {
    const [path, set] = line.split('\t') as [string, string];
    const cached = join(cacheDir, 'dev', `${path.replaceAll('/', '_')}.f32`);
    let samples: Float32Array;
    if (existsSync(cached)) samples = new Float32Array(readFileSync(cached).buffer.slice(0));
    else {
      samples = readAudio(join(devDir, path), 16_000).samples;
      writeFileSync(cached, Buffer.from(samples.buffer));
    }
    yield { source: `dev:${set} (whole utterances)`, samples, sampleRate: 16_000 };
  }
}

function* slidingWindows(
  source: string,
  samples: Float32Array,
  sampleRate: number,
  seconds: number,
  stepSeconds: number,
): Generator<Window> {
  const length = Math.round(seconds * sampleRate);
  for (let start = 0; start + length <= samples.length; start += Math.round(stepSeconds * sampleRate)) {
    yield { source, samples: samples.subarray(start, start + length), sampleRate };
  }
}

const RATES = [8000, 16_000, 22_050, 24_000, 44_100, 48_000];

function* generated(random: () => number): Generator<Window> {
  const gauss = () => Math.sqrt(-2 * Math.log(Math.max(1e-12, random()))) * Math.cos(2 * Math.PI * random());
  for (let round = 0; ; round++) {
    const sampleRate = RATES[round % RATES.length]!;
    const n = 5 * sampleRate;
    const kind = round % 8;
    const x = new Float32Array(n);
    if (kind === 0) {
      // digital silence, or a dither floor
      if (round % 16 === 8) for (let i = 0; i < n; i++) x[i] = gauss() * 1e-5;
      yield { source: 'silence and dither', samples: x, sampleRate };
    } else if (kind === 1) {
      const level = 10 ** ((-60 + 55 * random()) / 20);
      for (let i = 0; i < n; i++) x[i] = gauss() * level;
      yield { source: 'white noise', samples: x, sampleRate };
    } else if (kind === 2) {
      // brown-ish and pink-ish noise: leaky integrations of white noise
      const leak = 0.9 + 0.099 * random();
      let state = 0;
      for (let i = 0; i < n; i++) {
        state = leak * state + gauss() * 0.02;
        x[i] = state;
      }
      yield { source: 'coloured noise', samples: x, sampleRate };
    } else if (kind === 3) {
      const tones = 1 + Math.floor(random() * 3);
      for (let t = 0; t < tones; t++) {
        const f = 100 + random() * 3900;
        const a = 0.3 / tones;
        for (let i = 0; i < n; i++) x[i] = x[i]! + a * Math.sin((2 * Math.PI * f * i) / sampleRate);
      }
      yield { source: 'steady tones', samples: x, sampleRate };
    } else if (kind === 4) {
      const f0 = 100 + random() * 400;
      const f1 = 1000 + random() * 3000;
      let phase = 0;
      for (let i = 0; i < n; i++) {
        phase += (2 * Math.PI * (f0 + ((f1 - f0) * i) / n)) / sampleRate;
        x[i] = 0.3 * Math.sin(phase);
      }
      yield { source: 'sweeps', samples: x, sampleRate };
    } else if (kind === 5 || kind === 6) {
      // music-like: notes of a scale with harmonics and decaying envelopes, chords, a noise drum
      const beat = Math.round(sampleRate * (0.15 + 0.35 * random()));
      for (let start = 0; start < n; start += beat) {
        const notes = kind === 5 ? 1 : 3;
        for (let v = 0; v < notes; v++) {
          const f = 110 * 2 ** (Math.floor(random() * 36) / 12);
          for (let i = start; i < Math.min(n, start + 3 * beat); i++) {
            const t = (i - start) / sampleRate;
            const envelope = Math.exp(-t * 4) * Math.min(1, t * 200);
            let value = 0;
            for (let h = 1; h <= 6; h++) value += Math.sin(2 * Math.PI * f * h * t) / h;
            x[i] = x[i]! + 0.08 * envelope * value;
          }
        }
        if (random() < 0.5)
          for (let i = start; i < Math.min(n, start + beat / 4); i++)
            x[i] = x[i]! + 0.2 * gauss() * Math.exp(-(i - start) / (sampleRate * 0.02));
      }
      yield { source: 'music-like', samples: x, sampleRate };
    } else {
      // clicks and square waves
      const f = 50 + random() * 950;
      for (let i = 0; i < n; i++) x[i] = 0.2 * Math.sign(Math.sin((2 * Math.PI * f * i) / sampleRate));
      yield { source: 'square waves', samples: x, sampleRate };
    }
  }
}

export function countFalsePositives(
  key: string,
  windows: number,
  sharedDir: string,
  cacheDir: string,
  random: () => number,
): FalsePositiveReport {
  const report: FalsePositiveReport = { windows: 0, found: 0, seconds: 0, bySource: {} };
  const synthetic = syntheticSpeech(join(cacheDir, 'synthetic'), 8);
  function* all(): Generator<Window> {
    yield* devUtterances(sharedDir, cacheDir);
    for (const file of synthetic) yield* slidingWindows(`synthetic speech (5 s windows)`, file.samples, file.sampleRate, 5, 1);
    // speech marked under another key must not read under ours
    for (const [i, file] of synthetic.slice(0, 20).entries()) {
      const marked = embedWatermark(file.samples, file.sampleRate, (0x1234567890 + i).toString(16).padStart(10, '0'), `${key}-other`);
      yield* slidingWindows('speech marked under another key', marked, file.sampleRate, 5, 2);
    }
    yield* generated(random);
  }
  for (const window of all()) {
    if (report.windows >= windows) break;
    const result = detectWatermark(window.samples, window.sampleRate, key);
    const row = report.bySource[window.source] ?? { windows: 0, found: 0, gated: 0, maxZ: Number.NEGATIVE_INFINITY };
    report.bySource[window.source] = row;
    row.windows++;
    row.maxZ = Math.max(row.maxZ, result.syncZ);
    if (result.syncZ >= DETECT_MIN_SYNC_Z) row.gated++;
    if (result.found) {
      row.found++;
      report.found++;
      console.log(`  FALSE POSITIVE: ${window.source} id ${result.id} z ${result.syncZ.toFixed(2)}`);
    }
    report.windows++;
    report.seconds += window.samples.length / window.sampleRate;
    if (report.windows % 500 === 0) process.stdout.write(`\r${report.windows} unmarked windows`);
  }
  return report;
}
