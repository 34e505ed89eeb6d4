/**
 * The contract of a benchmark module: `test/bench/<name>.bench.ts` whose default export is a
 * `Bench`. `npm run bench` finds every such file, runs them one after another, prints their
 * figures, and writes docs/BENCHMARKS.md and docs/benchmarks.json.
 */

export interface Figure {
  /** Stable key in docs/benchmarks.json, e.g. `gate.approval.throughput_vs_hello`. */
  key: string;
  label: string;
  value: number;
  /** `ratio`, `req/s`, `ms`, … */
  unit: string;
  /**
   * Only for figures measured against a baseline side by side in the same run (a ratio): the
   * machine is shared and noisy, so `--quick` compares these and nothing absolute.
   */
  better?: 'higher' | 'lower';
  /** A goal the figure should meet, shown as met or missed. */
  goal?: { atLeast?: number; atMost?: number };
}

export interface BenchOptions {
  /** A reduced run: the whole `--quick` suite has to finish in under two minutes. */
  quick: boolean;
}

export type BenchOutcome = { figures: Figure[]; notes: string[] } | { skipped: string };

export interface Bench {
  title: string;
  /** How the figures are taken: the method, load and settings, for docs/BENCHMARKS.md. */
  method: string;
  run(options: BenchOptions): Promise<BenchOutcome>;
}
