/**
 * `npm run bench`: runs every `test/bench/*.bench.ts`, prints the figures, writes docs/BENCHMARKS.md
 * and docs/benchmarks.json.
 * `npm run bench -- --quick`: a reduced run (under two minutes) that writes nothing, prints each
 * side-by-side ratio against the committed benchmarks.json and exits non-zero when a bench fails.
 * A ratio more than 30% worse is flagged, not failed: on two shared cores one short run can be that
 * far off on an unchanged commit, and a check that fails on timing noise is a timed test.
 * `--quick --strict` also fails on a flagged ratio that a second run of its bench confirms.
 * `--only <name>` (repeatable; `load` or `load.bench.ts`) runs those benches alone; a full run of a
 * few merges their entries into docs/benchmarks.json and docs/BENCHMARKS.md and keeps every other
 * bench's entry as it was, with the date and commit it was measured at.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { buildPages } from '../../launch/page-bundles.js';
import { gitCommit, repositoryRoot } from '../support/repository.js';
import type { Bench } from './bench.js';
import { type BenchEntry, type BenchReport, compareWithBaseline, describeMachine, printEntry, renderMarkdown } from './support/report.js';
import { renderWatermarkEvaluation } from './support/watermark-evaluation.js';

const REGRESSION_TOLERANCE = 0.3;
const benchDir = join(repositoryRoot, 'test/bench');
const jsonPath = join(repositoryRoot, 'docs/benchmarks.json');
const markdownPath = join(repositoryRoot, 'docs/BENCHMARKS.md');

async function runBench(file: string, quick: boolean, measured: BenchEntry['measured']): Promise<BenchEntry> {
  const bench = ((await import(pathToFileURL(join(benchDir, file)).href)) as { default: Bench }).default;
  console.log(`\n▶ ${bench.title} (${file})`);
  const started = performance.now();
  const entry: BenchEntry = { file, title: bench.title, method: bench.method, seconds: 0, figures: [], notes: [], measured };
  try {
    const outcome = await bench.run({ quick });
    if ('skipped' in outcome) entry.skipped = outcome.skipped;
    else Object.assign(entry, outcome);
  } catch (error) {
    entry.failed = error instanceof Error ? error.message : String(error);
    console.error(error);
  }
  entry.seconds = Math.round((performance.now() - started) / 100) / 10;
  printEntry(entry);
  return entry;
}

/**
 * Exit code: 1 when a bench failed or (strict) a side-by-side figure regressed, 2 when there is no
 * baseline.
 */
function checkAgainstBaseline(entries: BenchEntry[], strict: boolean): number {
  if (!existsSync(jsonPath)) {
    console.error(`\nno ${jsonPath} to compare with: run \`npm run bench\` once and commit its output`);
    return 2;
  }
  const comparisons = compareWithBaseline(entries, JSON.parse(readFileSync(jsonPath, 'utf8')) as BenchReport, REGRESSION_TOLERANCE);
  console.log(`\nCompared with docs/benchmarks.json (side-by-side ratios only; a regression is > ${REGRESSION_TOLERANCE * 100}% worse):`);
  for (const { figure, baseline, worseBy, regressed } of comparisons) {
    const change = `${worseBy > 0 ? 'worse' : 'better'} by ${Math.abs(Math.round(worseBy * 100))}%`;
    console.log(
      `  ${regressed ? (strict ? 'REGRESSED' : 'flagged  ') : 'ok       '} ${figure.key}: ${baseline} → ${figure.value} (${change})`,
    );
  }
  if (comparisons.length === 0) console.log('  nothing to compare: no figure of this run has a baseline');
  const regressed = comparisons.some((comparison) => comparison.regressed);
  if (regressed && !strict) console.log('  (flagged figures do not fail --quick; run `npm run bench -- --quick --strict` to confirm them)');
  return (strict && regressed) || entries.some((entry) => entry.failed) ? 1 : 0;
}

/**
 * A --quick --strict figure that looks regressed is measured once more, by a second run of its bench alone,
 * and the better of the two measurements is compared: on two shared cores one short run can be 30 %
 * off (seen in CI: 0.301 → 0.208 on an unchanged commit), while a real regression shows both times.
 */
async function confirmRegressions(entries: BenchEntry[], measured: BenchEntry['measured']): Promise<BenchEntry[]> {
  const baseline = JSON.parse(readFileSync(jsonPath, 'utf8')) as BenchReport;
  const suspects = new Set(
    compareWithBaseline(entries, baseline, REGRESSION_TOLERANCE)
      .filter((comparison) => comparison.regressed)
      .map((comparison) => comparison.figure.key),
  );
  if (suspects.size === 0) return entries;
  const files = entries.filter((entry) => entry.figures.some((figure) => suspects.has(figure.key))).map((entry) => entry.file);
  console.log(`
confirming ${[...suspects].join(', ')} with a second run of ${files.join(', ')}`);
  const reruns = new Map<string, BenchEntry>();
  for (const file of files) reruns.set(file, await runBench(file, true, measured));
  return entries.map((entry) => {
    const again = new Map((reruns.get(entry.file)?.figures ?? []).map((figure) => [figure.key, figure]));
    const figures = entry.figures.map((figure) => {
      const second = again.get(figure.key);
      if (!second || !figure.better) return figure;
      return (figure.better === 'higher' ? second.value > figure.value : second.value < figure.value) ? second : figure;
    });
    return { ...entry, figures };
  });
}

/** `load` and `load.bench.ts` both name test/bench/load.bench.ts. */
const named = (file: string, names: string[]) => names.length === 0 || names.some((name) => file === name || file === `${name}.bench.ts`);

/**
 * The report to write: this run's entries, and, when only some benches ran, every other entry of
 * the committed report as it was (each keeps the date and commit it was measured at).
 */
function mergedReport(report: BenchReport, partial: boolean): BenchReport {
  if (!partial || !existsSync(jsonPath)) return report;
  const previous = JSON.parse(readFileSync(jsonPath, 'utf8')) as BenchReport;
  const ran = new Set(report.benches.map((entry) => entry.file));
  const kept = previous.benches
    .filter((entry) => !ran.has(entry.file))
    .map((entry) => ({
      ...entry,
      measured: entry.measured ?? { command: previous.command, date: previous.date, commit: previous.commit },
    }));
  return { ...report, benches: [...kept, ...report.benches].sort((a, b) => a.file.localeCompare(b.file)) };
}

async function main() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      strict: { type: 'boolean', default: false },
      only: { type: 'string', multiple: true, default: [] },
    },
  });
  const quick = values.quick ?? false;
  const strict = values.strict ?? false;
  const only = values.only ?? [];
  const command = `npm run bench${quick || only.length ? ' --' : ''}${quick ? ' --quick' : ''}${strict ? ' --strict' : ''}${only.map((name) => ` --only ${name}`).join('')}`;
  const report: BenchReport = { command, date: new Date().toISOString(), commit: gitCommit(), machine: describeMachine(), benches: [] };
  console.log(`${command}: ${report.machine.cpu} × ${report.machine.cores}, Node ${report.machine.node}, commit ${report.commit}`);
  const started = performance.now();

  const files = readdirSync(benchDir)
    .filter((file) => file.endsWith('.bench.ts') && named(file, only))
    .sort();
  if (files.length === 0) throw new Error(`no bench matches ${only.join(', ')}`);
  const measured = { command, date: report.date, commit: report.commit };
  // The planes the benches start serve the pages' bundles, which are build output (launch/page-bundles.ts).
  await buildPages();
  for (const file of files) report.benches.push(await runBench(file, quick, measured));
  console.log(`\nall benches: ${Math.round((performance.now() - started) / 1000)} s`);

  if (quick) {
    const confirm = strict && existsSync(jsonPath);
    const entries = confirm ? await confirmRegressions(report.benches, measured) : report.benches;
    process.exitCode = checkAgainstBaseline(entries, strict);
    return;
  }
  const written = mergedReport(report, only.length > 0);
  writeFileSync(jsonPath, `${JSON.stringify(written, null, 2)}\n`);
  writeFileSync(markdownPath, renderMarkdown(written, REGRESSION_TOLERANCE, renderWatermarkEvaluation()));
  console.log(`wrote ${markdownPath} and ${jsonPath}${only.length ? ` (${files.join(', ')} replaced, the other entries kept)` : ''}`);
  if (report.benches.some((entry) => entry.failed)) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
