/**
 * A GPU run's network, from its weights to a decision: does it become the service's model?
 *
 *   npx tsx tools/voiceprint-training/candidate.ts --run RUN_FILES --arch ecapa512 --name vip-speaker-v3 \
 *       [--against vip-speaker-v2] [--ship] [--dev /work/shared/speech/dev] [--train /work/shared/speech/train]
 *
 * RUN_FILES is what a device run of gpu_train.py gave back (run.json and the ARCH-N.npz weights).
 * 1. export.py writes models/NAME.onnx and its manifest entry, first among the bundled models;
 * 2. cohort.ts embeds the train speakers with it and keeps a cohort chosen as --against's was
 *    (recordings per speaker, top-K);
 * 3. evaluate.ts embeds dev through the service's own pipeline and reports it (normalized EERs per
 *    condition and set among the figures);
 * 4. candidate-comparison.ts's rule: it wins when its normalized EER is lower than --against's
 *    committed report in every condition and set (a zero kept at zero counts as no worse);
 * 5. with --ship and a win, the new model's files are written as the shipped model's were: the
 *    calibration (evaluate.ts --write), a copy's floor (duplicate-eval.ts --write), screening by
 *    sample length (screening-eval.ts --write), and its card (begun here when it has none, its tables
 *    written by calibrate.py). Without a win, or without --ship, the models folder is put back as it
 *    was. Either way the comparison stays in work/NAME.comparison.md.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bundledManifestPath, bundledModelLocations, readManifest } from '../../origin/src/voiceprint/manifest.js';
import { beatsEverywhere, compareEers, comparisonTable, type EerTable } from './candidate-comparison.js';
import { TRAINING_WORK } from './embedding-cache.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const MODELS = bundledModelLocations.modelsDir;

const flags = parseArgs({
  options: {
    run: { type: 'string' },
    arch: { type: 'string' },
    name: { type: 'string' },
    against: { type: 'string', default: 'vip-speaker-v2' },
    ship: { type: 'boolean', default: false },
    dev: { type: 'string', default: '/work/shared/speech/dev' },
    train: { type: 'string', default: '/work/shared/speech/train' },
  },
}).values;

function step(command: string, args: string[]): void {
  console.log(`\n$ ${command} ${args.map((arg) => relative(process.cwd(), arg) || arg).join(' ')}`);
  const run = spawnSync(command, args, { stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`${command} ${args[0]} failed (exit ${run.status ?? run.signal})`);
}
const tsx = (script: string, args: string[]) => step('npx', ['tsx', join(HERE, script), ...args]);
const python = (script: string, args: string[]) => step('/usr/bin/python3', [join(HERE, script), ...args]);

interface Report {
  normalized?: { eer_pct: EerTable };
}
const normalizedEers = (report: Report, whose: string): EerTable => {
  if (!report.normalized) throw new Error(`${whose}'s report has no normalized figures: it has no cohort`);
  return report.normalized.eer_pct;
};

function newCard(name: string, run: string, arch: string, comparison: string): string {
  const state = JSON.parse(readFileSync(join(run, 'run.json'), 'utf8')) as Record<string, unknown>;
  const facts = ['step', 'train_s', 'crops'].map((key) => `${key} ${String(state[key])}`).join(', ');
  const block = (table: string) => `<!-- calibrate.py: ${table} -->\n<!-- /calibrate.py: ${table} -->`;
  return `# ${name}

The \`${arch}\` network of a \`gpu_train.py\` run (${facts}), exported by \`export.py\` and chosen by
\`tools/voiceprint-training/candidate.ts\` because it beat the model it replaces on dev in every
condition and set, normalized:

${comparison}

## Decisions per trial condition

${block('decisions')}

## 1:N points

${block('one-to-n')}

## Screening by sample length

${block('screening')}

## Score normalization

${block('normalization')}
`;
}

async function main() {
  const { run, arch, name, against } = flags;
  if (!run || !arch || !name) throw new Error('candidate.ts needs --run RUN_FILES, --arch ARCH and --name vip-speaker-NAME');
  const manifestBefore = readFileSync(bundledManifestPath, 'utf8');
  const shipped = readManifest(bundledManifestPath).models.find((model) => model.name === against);
  if (!shipped?.cohort) throw new Error(`--against ${against}: no such bundled model with a cohort in models/manifest.json`);
  const shippedReport = JSON.parse(readFileSync(join(MODELS, `${against}.calibration.json`), 'utf8')) as Report;
  const created = [`${name}.onnx`, `${name}.cohort.f32`].filter((file) => !existsSync(join(MODELS, file)));
  const reportFile = join(TRAINING_WORK, `${name}.dev-report.json`);
  let shippedNow = false;
  try {
    python('export.py', ['--run', resolve(run), '--arch', arch, '--out', join(MODELS, `${name}.onnx`)]);
    const cohort = ['--per-speaker', String(shipped.cohort.per_speaker), '--top-k', String(shipped.cohort.top_k)];
    tsx('cohort.ts', [
      '--speech',
      resolve(flags.train),
      '--model',
      name,
      '--embed-per-speaker',
      String(shipped.cohort.per_speaker),
      '--write',
      ...cohort,
    ]);
    tsx('evaluate.ts', ['--speech', resolve(flags.dev), '--model', name, '--report', reportFile]);

    const comparisons = compareEers(
      normalizedEers(shippedReport, against),
      normalizedEers(JSON.parse(readFileSync(reportFile, 'utf8')), name),
    );
    const table = comparisonTable(against, name, comparisons);
    const wins = beatsEverywhere(comparisons);
    writeFileSync(join(TRAINING_WORK, `${name}.comparison.md`), `${table}\n`);
    console.log(`\n${table}\n\n${name} ${wins ? 'beats' : 'does not beat'} ${against} in every condition and set, normalized`);
    if (!wins || !flags.ship) return;

    const card = join(MODELS, `${name}.md`);
    if (!existsSync(card)) writeFileSync(card, newCard(name, resolve(run), arch, table));
    tsx('evaluate.ts', ['--speech', resolve(flags.dev), '--model', name, '--write']);
    tsx('duplicate-eval.ts', ['--speech', resolve(flags.dev), '--model', name, '--write']);
    tsx('screening-eval.ts', ['--speech', resolve(flags.dev), '--model', name, '--write']);
    shippedNow = true;
    console.log(`${name} is now the service's model (first in models/manifest.json); its card is models/${name}.md`);
  } finally {
    if (!shippedNow) {
      writeFileSync(bundledManifestPath, manifestBefore);
      for (const file of created) rmSync(join(MODELS, file), { force: true });
      console.log(`models/ is as it was: ${against} stays the service's model`);
    }
  }
}

await main();
