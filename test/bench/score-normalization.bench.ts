import { readFileSync } from 'node:fs';
import { createVoiceprintEngine } from '../../origin/src/voiceprint/index.js';
import { ENROLL_CLIPS, OTHER_SPEAKER_CLIPS } from '../support/speech.js';
import type { Bench, Figure } from './bench.js';
import { median, round } from './support/stats.js';

/** Decisions per timed batch: one decision takes microseconds, under the timer's resolution. */
const BATCH = 200;

/**
 * The decision figures this cost buys, as the model's dev evaluation measured them (`npx tsx
 * tools/voiceprint-training/evaluate.ts --write`, which needs ../shared/speech/dev and writes the
 * report read here): EER per condition and set, raw cosine against AS-norm.
 */
function devFigures(model: string): string[] {
  const report = JSON.parse(
    readFileSync(new URL(`../../origin/src/voiceprint/models/${model}.calibration.json`, import.meta.url), 'utf8'),
  ) as {
    normalized?: {
      raw_eer_pct: Record<string, Record<string, number>>;
      eer_pct: Record<string, Record<string, number>>;
      raw_fnir_at_design_size: Record<string, { point: number; fnir_pct: number; far_pct?: number }>;
      fnir_at_design_size: Record<string, { point: number; fnir_pct: number; far_pct?: number }>;
    };
  };
  if (!report.normalized) return [];
  const { raw_eer_pct: raw, eer_pct: normalized, raw_fnir_at_design_size: rawPoints, fnir_at_design_size: points } = report.normalized;
  const oneToN = Object.entries(points).map(([point, { fnir_pct, far_pct }]) =>
    far_pct === undefined
      ? `dev FNIR at ${point} (100,000 voices), cosine → AS-norm: ${rawPoints[point]?.fnir_pct} → ${fnir_pct} %`
      : `dev different-speaker pairs above ${point} (FNIR ${fnir_pct} % both ways), cosine → AS-norm: ${rawPoints[point]?.far_pct} → ${far_pct} %`,
  );
  return [
    ...oneToN,
    ...Object.entries(normalized).map(
      ([condition, sets]) =>
        `dev EER ${condition.replaceAll('_', ' ')}, cosine → AS-norm (evaluate.ts --write): ` +
        Object.entries(sets)
          .map(([set, value]) => `${set} ${raw[condition]?.[set]} → ${value} %`)
          .join(', '),
    ),
  ];
}

const bench: Bench = {
  title: 'Score normalization (origin): what AS-norm adds to a 1:1 decision',
  method: [
    'The bundled model decides two recordings (sample vs sample) on the AS-norm score: both sides scored against its cohort',
    '(2,440 rows, top 100), and one recording against an enrolled voice (sample vs enrolled) on the raw cosine. Both are',
    '`engine.judge` on the same two embeddings of committed recordings (fixtures/speech), in batches of 200 decisions,',
    'alternating, on one thread; the figures are the median time per decision and their difference. The embeddings are made',
    'once before: the pipeline that makes them costs what the voiceprint bench says, with or without normalization.',
    '`--quick`: 5 batches of each, else 50.',
  ].join(' '),
  async run({ quick }) {
    const engine = await createVoiceprintEngine({ threads: 1 });
    try {
      const normalizes = engine.model.calibration?.sample_vs_sample.score === 'as_norm';
      if (!normalizes) return { skipped: `${engine.model.name} decides sample vs sample on the cosine` };
      const [first, second] = await Promise.all(
        [ENROLL_CLIPS[0]!, OTHER_SPEAKER_CLIPS[0]!].map((file) => engine.embedFile(new Uint8Array(readFileSync(file)))),
      );
      const perDecision = (condition: 'sample_vs_sample' | 'sample_vs_enrolled') => {
        const started = performance.now();
        for (let i = 0; i < BATCH; i++) engine.judge(condition, first!, second!);
        return (performance.now() - started) / BATCH;
      };
      const normalized: number[] = [];
      const cosine: number[] = [];
      for (let round = 0; round < (quick ? 5 : 50); round++) {
        normalized.push(perDecision('sample_vs_sample'));
        cosine.push(perDecision('sample_vs_enrolled'));
      }
      const added = median(normalized) - median(cosine);
      const figures: Figure[] = [
        {
          key: 'score_normalization.as_norm.p50_ms',
          label: 'a 1:1 decision on the AS-norm score: p50',
          value: round(median(normalized), 4),
          unit: 'ms',
        },
        {
          key: 'score_normalization.cosine.p50_ms',
          label: 'a 1:1 decision on the cosine: p50',
          value: round(median(cosine), 4),
          unit: 'ms',
        },
        {
          key: 'score_normalization.added_ms',
          label: 'what normalization adds to a 1:1 decision (p50 difference)',
          value: round(added, 4),
          unit: 'ms',
          goal: { atMost: 5 },
        },
      ];
      return {
        figures,
        notes: [`${engine.model.name}; ${normalized.length} batches of ${BATCH} decisions each way.`, ...devFigures(engine.model.name)],
      };
    } finally {
      await engine.close();
    }
  },
};

export default bench;
