import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { fbankFixtureDir, speechDir } from '../../origin/src/testing/fixtures.js';
import { TempDir } from '../../origin/src/testing/temp-dir.js';
import { createVoiceprintEngine } from '../../origin/src/voiceprint/engine.js';

/**
 * The GPU recipe, run on the CPU for a few seconds: fixture recordings packed as Opus packets
 * (pack.py), two networks trained on the same batches (gpu_train.py), one exported through
 * export.py, and the ONNX file it wrote loaded by the service's engine from the manifest export.py
 * wrote beside it. Needs Debian's Python with torch, torchaudio, onnx and numpy, and libopus.
 */

const PYTHON = '/usr/bin/python3';
const TRAINING = path.dirname(fileURLToPath(import.meta.url));
const PACKAGES = 'python3-torch python3-torchaudio python3-onnx python3-numpy libopus0';
/** About 15 s of CPU in all (three Python starts, 24 small steps, an engine); minutes on a loaded 2-core box. */
const TEST_TIMEOUT_MS = 600_000;

function missing(): string | null {
  const probe = spawnSync(PYTHON, [
    '-c',
    [
      'import ctypes, importlib.util',
      "print(' '.join(m for m in ('torch', 'torchaudio', 'onnx', 'numpy') if importlib.util.find_spec(m) is None))",
      "ctypes.CDLL('libopus.so.0')",
    ].join('\n'),
  ]);
  if (probe.error) return `${PYTHON} is not installed (apt-get install ${PACKAGES})`;
  const modules = probe.stdout.toString().trim();
  if (modules) return `${PYTHON} lacks ${modules} (apt-get install ${PACKAGES})`;
  if (probe.status !== 0) return `libopus.so.0 is not installed (apt-get install libopus0)`;
  return null;
}

const trainingMissing = missing();
if (trainingMissing) console.warn(`[gpu-train.test] skipped: ${trainingMissing}`);

const run = promisify(execFile);
// One thread: the suite shares two cores, and idle OpenMP threads spinning on a busy machine cost many times their work.
const python = (script: string, args: string[], env: Record<string, string> = {}) =>
  run(PYTHON, [path.join(TRAINING, script), ...args], {
    env: { ...process.env, OMP_NUM_THREADS: '1', ...env },
    maxBuffer: 16 * 1024 * 1024,
    timeout: TEST_TIMEOUT_MS, // no orphan left training after the test gave up
  });

interface RunState {
  final: boolean;
  step: number;
  archs: Record<string, { history: { step: number; loss: number }[] }>;
}

/** A few recordings of each of the first speakers of the committed speech fixtures, as a speech folder (absolute paths). */
function fixtureSubset(file: string, speakers: number, perSpeaker: number): string[] {
  const [header = '', ...rows] = readFileSync(path.join(speechDir, 'manifest.tsv'), 'utf8').trim().split('\n');
  const bySpeaker = new Map<string, string[][]>();
  for (const row of rows.map((line) => line.split('\t'))) {
    const speaker = row[header.split('\t').indexOf('speaker')]!;
    bySpeaker.set(speaker, [...(bySpeaker.get(speaker) ?? []), row]);
  }
  const chosen = [...bySpeaker.keys()].sort().slice(0, speakers);
  const lines = chosen.flatMap((speaker) =>
    bySpeaker
      .get(speaker)!
      .slice(0, perSpeaker)
      .map(([relative, ...rest]) => [path.join(speechDir, relative!), ...rest].join('\t')),
  );
  writeFileSync(file, `${[header, ...lines].join('\n')}\n`);
  return chosen;
}

describe.skipIf(trainingMissing !== null)(
  `GPU training recipe on the CPU${trainingMissing ? ` (skipped: ${trainingMissing})` : ''}`,
  () => {
    const tmp = new TempDir();
    afterAll(() => tmp.remove());

    it(
      'packs fixtures as Opus (at most 2 s each), trains two networks whose loss falls, and exports one the engine embeds with',
      async () => {
        const speech = tmp.file('speech');
        mkdirSync(speech);
        const speakers = fixtureSubset(path.join(speech, 'manifest.tsv'), 6, 3);
        const pack = tmp.file('gpu-data/train.npz');
        await python('pack.py', [speech, pack, '--jobs', '1', '--max-seconds', '2']);
        expect(existsSync(tmp.file('gpu-data/libopus.so.0'))).toBe(true);
        // The device budget keeps the middle of each recording: no row longer than 2 s at 16 kHz, and some cut to it.
        const lengths = await run(PYTHON, ['-c', `import numpy; print(' '.join(map(str, numpy.load('${pack}')['samples'])))`]);
        const samples = lengths.stdout.trim().split(' ').map(Number);
        expect(Math.max(...samples)).toBe(32_000);

        const runDir = tmp.file('run');
        const archs = ['ecapa16', 'ecapa24'];
        const training = await python('gpu_train.py', [
          pack,
          '--out',
          runDir,
          '--archs',
          archs.join(','),
          '--steps',
          '24',
          '--log-every',
          '8',
          '--batch',
          '16',
          '--crop-s',
          '0.5',
          '--lr',
          '1e-2',
          '--margin',
          '0',
          '--jobs',
          '1',
        ]);
        expect(training.stdout).toContain(`corpus on cpu: ${speakers.length} speakers, ${speakers.length * 3} classes`);
        expect(training.stdout).toMatch(/fbank max abs difference from torchaudio kaldi\.fbank: /);
        const state = JSON.parse(readFileSync(path.join(runDir, 'run.json'), 'utf8')) as RunState;
        expect(state).toMatchObject({ final: true, step: 24 });
        expect(Object.keys(state.archs).sort()).toEqual(archs);
        for (const arch of archs) {
          const losses = state.archs[arch]!.history.map((entry) => entry.loss);
          expect(losses).toHaveLength(3);
          expect(losses.at(-1)!, `${arch} losses ${losses.join(', ')}`).toBeLessThan(losses[0]!);
        }

        const models = tmp.file('models');
        mkdirSync(models);
        await python('export.py', ['--run', runDir, '--arch', 'ecapa16', '--out', path.join(models, 'vip-speaker-smoke.onnx')], {
          VIP_TRAINING_WORK: tmp.file('work'),
        });
        const engine = await createVoiceprintEngine({ manifestPath: path.join(models, 'manifest.json'), threads: 1 });
        try {
          expect(engine.model.name).toBe('vip-speaker-smoke');
          const { embedding } = await engine.embedFile(new Uint8Array(readFileSync(path.join(fbankFixtureDir, 'a.wav'))));
          expect(embedding).toHaveLength(192);
          expect(embedding.every(Number.isFinite)).toBe(true);
          expect(Math.hypot(...embedding)).toBeCloseTo(1, 4);
        } finally {
          await engine.close();
        }
      },
      TEST_TIMEOUT_MS,
    );
  },
);
