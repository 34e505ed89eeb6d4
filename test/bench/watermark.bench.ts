import { speechLike } from '@vip/shared-schema/testing/speech-like';
import { detectWatermark } from '@vip/shared-schema/watermark/detect';
import { embedWatermark } from '@vip/shared-schema/watermark/embed';
import { WATERMARK_KEY } from '@vip/shared-schema/watermark/index';
import type { Bench, Figure } from './bench.js';
import { median, percentile, round } from './support/stats.js';

const ID = '3f2a9c07e1';

function timed(runs: number, work: () => void): number[] {
  work(); // warm-up: compile, build the FFT tables
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    work();
    times.push(performance.now() - started);
  }
  return times;
}

const stats = (key: string, label: string, values: number[], goal: number): Figure[] => [
  { key: `${key}.p50_ms`, label: `${label}: p50`, value: round(median(values), 1), unit: 'ms', goal: { atMost: goal } },
  { key: `${key}.p99_ms`, label: `${label}: p99`, value: round(percentile(values, 0.99), 1), unit: 'ms' },
];

const bench: Bench = {
  title: 'Audio watermark: marking and detecting 10 s (shared-schema codec, Node, one thread)',
  method: [
    'Marking: `embedWatermark` on 10 s of the speech-like test signal (shared-schema/src/testing/speech-like.ts) at 16 and 48 kHz,',
    'the whole call (one analysis and one synthesis pass at 16 kHz, 48 kHz input resampled there and the mark back, the SNR budget). Detection: `detectWatermark` on 10 s cut at 2.345 s from a marked',
    '30 s signal at 16 kHz, so the search for where the frame starts runs over every offset, and on 10 s of unmarked signal (every offset',
    'scored, no decode). 30 runs each after one warm-up (10 with --quick).',
  ].join(' '),
  async run({ quick }) {
    const runs = quick ? 10 : 30;
    const figures: Figure[] = [];
    for (const [rate, goal] of [
      [16_000, 20],
      [48_000, 50],
    ] as const) {
      const audio = speechLike(10, rate, 5);
      figures.push(
        ...stats(
          `watermark.embed_10s_${rate / 1000}k`,
          `marking 10 s at ${rate / 1000} kHz`,
          timed(runs, () => embedWatermark(audio, rate, ID, WATERMARK_KEY)),
          goal,
        ),
      );
    }
    const rate = 16_000;
    const marked = embedWatermark(speechLike(30, rate, 6), rate, ID, WATERMARK_KEY);
    const cut = marked.slice(Math.round(2.345 * rate), Math.round(12.345 * rate));
    if (detectWatermark(cut, rate, WATERMARK_KEY).id !== ID) throw new Error('the bench signal did not read back');
    figures.push(
      ...stats(
        'watermark.detect_10s_cut',
        'detecting in a 10 s cut (16 kHz)',
        timed(runs, () => detectWatermark(cut, rate, WATERMARK_KEY)),
        150,
      ),
    );
    const unmarked = speechLike(10, rate, 7);
    figures.push(
      ...stats(
        'watermark.detect_10s_unmarked',
        'detecting in 10 s of unmarked audio (16 kHz)',
        timed(runs, () => detectWatermark(unmarked, rate, WATERMARK_KEY)),
        150,
      ),
    );
    return {
      figures,
      notes: ['Absolute times on a shared machine: the goals (issue 32) are p50 ≤ 20 ms and ≤ 50 ms for marking, ≤ 150 ms for detection.'],
    };
  },
};

export default bench;
