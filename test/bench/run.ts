/**
 * `npm run bench`: runs every `test/bench/*.bench.ts`, prints the figures, writes docs/BENCHMARKS.md
 * and docs/benchmarks.json.
 * `npm run bench -- --quick`: a reduced run (under two minutes) that writes nothing and exits
 * non-zero when a side-by-side ratio is more than 30% worse than in the committed benchmarks.json.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Bench } from './bench.js';
import { type BenchEntry, type BenchReport, compareWithBaseline, describeMachine, printEntry, renderMarkdown } from './support/report.js';
import { gitCommit, repositoryRoot } from './support/repository.js';

const REGRESSION_TOLERANCE = 0.3;
const benchDir = join(repositoryRoot, 'test/bench');
const jsonPath = join(repositoryRoot, 'docs/benchmarks.json');
const markdownPath = join(repositoryRoot, 'docs/BENCHMARKS.md');

async function runBench(file: string, quick: boolean): Promise<BenchEntry> {
  const bench = ((await import(pathToFileURL(join(benchDir, file)).href)) as { default: Bench }).default;
  console.log(`\n▶ ${bench.title} (${file})`);
  const started = performance.now();
  const entry: BenchEntry = { file, title: bench.title, method: bench.method, seconds: 0, figures: [], notes: [] };
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

/** Exit code: 1 when a side-by-side figure regressed or a bench failed, 2 when there is no baseline. */
function checkAgainstBaseline(entries: BenchEntry[]): number {
  if (!existsSync(jsonPath)) {
    console.error(`\nno ${jsonPath} to compare with: run \`npm run bench\` once and commit its output`);
    return 2;
  }
  const comparisons = compareWithBaseline(entries, JSON.parse(readFileSync(jsonPath, 'utf8')) as BenchReport, REGRESSION_TOLERANCE);
  console.log(`\nCompared with docs/benchmarks.json (side-by-side ratios only; a regression is > ${REGRESSION_TOLERANCE * 100}% worse):`);
  for (const { figure, baseline, worseBy, regressed } of comparisons) {
    const change = `${worseBy > 0 ? 'worse' : 'better'} by ${Math.abs(Math.round(worseBy * 100))}%`;
    console.log(`  ${regressed ? 'REGRESSED' : 'ok       '} ${figure.key}: ${baseline} → ${figure.value} (${change})`);
  }
  if (comparisons.length === 0) console.log('  nothing to compare: no figure of this run has a baseline');
  const failed = entries.filter((entry) => entry.failed);
  return comparisons.some((comparison) => comparison.regressed) || failed.length > 0 ? 1 : 0;
}

async function main() {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  const quick = values.quick ?? false;
  const command = quick ? 'npm run bench -- --quick' : 'npm run bench';
  const report: BenchReport = { command, date: new Date().toISOString(), commit: gitCommit(), machine: describeMachine(), benches: [] };
  console.log(`${command}: ${report.machine.cpu} × ${report.machine.cores}, Node ${report.machine.node}, commit ${report.commit}`);
  const started = performance.now();

  const files = readdirSync(benchDir)
    .filter((file) => file.endsWith('.bench.ts'))
    .sort();
  for (const file of files) report.benches.push(await runBench(file, quick));
  console.log(`\nall benches: ${Math.round((performance.now() - started) / 1000)} s`);

  if (quick) {
    process.exitCode = checkAgainstBaseline(report.benches);
    return;
  }
  writeFileSync(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(markdownPath, renderMarkdown(report, REGRESSION_TOLERANCE));
  console.log(`wrote ${markdownPath} and ${jsonPath}`);
  if (report.benches.some((entry) => entry.failed)) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
