import { readFileSync } from 'node:fs';
import { createVoiceprintEngine } from '../../origin/src/voiceprint/index.js';
import { ENROLL_CLIPS, OTHER_SPEAKER_CLIPS } from '../support/speech.js';
import type { Bench, Figure } from './bench.js';
import { median, round } from './support/stats.js';

/** Decisions per timed batch: one decision takes microseconds, under the timer's resolution. */
const BATCH = 200;

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
      return { figures, notes: [`${engine.model.name}; ${normalized.length} batches of ${BATCH} decisions each way.`] };
    } finally {
      await engine.close();
    }
  },
};

export default bench;
