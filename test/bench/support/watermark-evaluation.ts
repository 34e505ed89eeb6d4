/**
 * The watermark's evaluation (tools/watermark/evaluate.ts) in docs/BENCHMARKS.md. It needs ffmpeg,
 * flite, festival and ../shared/speech, so `npm run bench` cannot run it: a run made with
 * `--record NAME` is kept, as printed, in docs/watermark-evaluation.json, and the benchmarks page
 * renders every kept run beside the figures the benches measure.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitCommit, repositoryRoot } from '../../support/repository.js';

export const watermarkEvaluationPath = join(repositoryRoot, 'docs/watermark-evaluation.json');

interface RecordedRun {
  command: string;
  date: string;
  commit: string;
  /** What the evaluation printed (markdown tables and notes). */
  lines: string[];
}

function readRuns(): Record<string, RecordedRun> {
  return existsSync(watermarkEvaluationPath)
    ? (JSON.parse(readFileSync(watermarkEvaluationPath, 'utf8')).runs as Record<string, RecordedRun>)
    : {};
}

/** Keeps `lines` as run `name`, replacing a run of that name. Returns the file written. */
export function recordWatermarkEvaluation(name: string, command: string, lines: string[]): string {
  const runs = { ...readRuns(), [name]: { command, date: new Date().toISOString(), commit: gitCommit(), lines } };
  writeFileSync(watermarkEvaluationPath, `${JSON.stringify({ runs }, null, 2)}\n`);
  return watermarkEvaluationPath;
}

/** The benchmarks page's section for the kept runs (none kept: nothing). */
export function renderWatermarkEvaluation(): string[] {
  const runs = Object.entries(readRuns());
  if (runs.length === 0) return [];
  const lines = [
    '',
    '## Audio watermark: robustness, false attributions and what marking does to the audio (tools/watermark/evaluate.ts)',
    '',
    'Not run by `npm run bench`: the evaluation needs ffmpeg, flite, festival and `../shared/speech`. Each run below',
    'is kept, as it printed, by its command with `--record` (docs/watermark-evaluation.json); docs/WATERMARK.md',
    'describes the conditions, the corpus and the design, and discusses these figures. Robustness: the payload',
    'recovered per condition (marked files at 16, 24, 22.05, 44.1 and 48 kHz in turn); "wrong id" counts a payload',
    'read that is not the one marked.',
  ];
  for (const [name, run] of runs) {
    lines.push(
      '',
      `### ${name}`,
      '',
      `\`${run.command}\` on ${run.date}, commit \`${run.commit}\``,
      '',
      ...run.lines.filter((line) => line.trim() !== ''),
    );
  }
  return lines;
}
