/**
 * The evaluation that sets a model's operating points, in one command:
 *
 *   npx tsx tools/voiceprint-training/evaluate.ts [--speech DIR] [--model NAME] [--write] [--report FILE] [--fresh] [--embed-only]
 *
 * 1. Embeds every recording of DIR/manifest.tsv (default /work/shared/speech/dev) through the
 *    service's own pipeline (decode, resample, VAD, fbank, ONNX: createVoiceprintEngine), keeping
 *    each one's speech seconds, and caches the result under work/.
 * 2. Runs calibrate.py on it: EER per set, the three trial conditions, calibration, impostor tails,
 *    FAR/FRR at each operating point, FPIR/FNIR against registry size, the DET plot.
 *    With --write (dev only: the points are chosen there and nowhere else) it stores the calibration
 *    in models/manifest.json and the report beside the model; without it, it only prints, which is
 *    how unseen speakers are measured against points chosen on dev. --report FILE also keeps the
 *    report as JSON (candidate.ts compares a candidate with the shipped model that way).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bundledManifestPath, bundledModelLocations, readManifest, selectModel } from '../../origin/src/voiceprint/manifest.js';
import { readSpeechManifest } from '../../origin/src/voiceprint/speech-manifest.js';
import { embeddingCachePath, embedRecordings, TRAINING_WORK } from './embedding-cache.js';

const HERE = dirname(fileURLToPath(import.meta.url));

const flags = parseArgs({
  options: {
    speech: { type: 'string', default: '/work/shared/speech/dev' },
    model: { type: 'string' },
    write: { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
    'embed-only': { type: 'boolean', default: false },
    report: { type: 'string' },
  },
}).values;

async function main() {
  const dir = resolve(flags.speech);
  const model = flags.model;
  mkdirSync(TRAINING_WORK, { recursive: true });
  const manifest = readManifest(bundledManifestPath);
  const entry = selectModel(manifest, bundledModelLocations, model);
  const cache = embeddingCachePath(dir, entry);
  if (!existsSync(cache) || flags.fresh) await embedRecordings(dir, readSpeechManifest(dir), entry.name, cache);
  if (flags['embed-only']) {
    console.log(cache);
    return;
  }
  const args = [
    join(HERE, 'calibrate.py'),
    cache,
    ...(flags.write ? ['--write'] : []),
    ...(flags.report ? ['--report', resolve(flags.report)] : []),
  ];
  const run = spawnSync('/usr/bin/python3', args, { stdio: 'inherit' });
  process.exitCode = run.status ?? 1;
}

await main();
