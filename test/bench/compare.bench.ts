import { readFileSync } from 'node:fs';
import { json, post, startService } from '../support/service.js';
import { ENROLL_CLIPS, OTHER_SPEAKER_CLIPS } from '../support/speech.js';
import type { Bench, Figure } from './bench.js';
import { median, percentile, round } from './support/stats.js';

/** One committed recording each of two different so762 speakers (about 3 s of speech each): the bench needs nothing beside the clone. */
function twoSpeakers(): [string, string] {
  return [ENROLL_CLIPS[0]!, OTHER_SPEAKER_CLIPS[0]!];
}

async function compareOnce(originUrl: string, token: string, audio1: Uint8Array, audio2: Uint8Array): Promise<number> {
  const form = new FormData();
  form.append('audio1', new Blob([audio1]), 'a.opus');
  form.append('audio2', new Blob([audio2]), 'b.opus');
  const started = performance.now();
  const response = await fetch(`${originUrl}/api/v1/detection/compare`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`compare answered ${response.status}`);
  return performance.now() - started;
}

const bench: Bench = {
  title: 'Compare over HTTP (origin): one upload at a time vs 4 concurrent uploads',
  method: [
    'Starts both planes as `npm start` does and sends `POST /api/v1/detection/compare` with two real Opus recordings',
    '(about 3 s each) as multipart over loopback HTTP: first one request at a time, then rounds of 4 at once, on the same',
    'server in the same run. The ratio of the medians says how much 4 concurrent uploads slow each one down on this machine',
    '(2 cores, 2 voiceprint threads); the event loop stays free because decoding and inference run in worker threads.',
  ].join(' '),
  async run({ quick }) {
    const [audio1, audio2] = twoSpeakers().map((file) => new Uint8Array(readFileSync(file))) as [Uint8Array, Uint8Array];
    const service = await startService();
    try {
      const credentials = { email: `bench-${Date.now()}@example.com`, password: 'bench-password-long-enough' };
      await post(`${service.originUrl}/api/v1/auth/register`, credentials);
      const token = (await json(await post(`${service.originUrl}/api/v1/auth/login`, credentials))).access_token as string;
      await compareOnce(service.originUrl, token, audio1, audio2); // warm the worker threads

      const rounds = quick ? 2 : 6;
      const single: number[] = [];
      for (let i = 0; i < rounds * 2; i++) single.push(await compareOnce(service.originUrl, token, audio1, audio2));
      const concurrent: number[] = [];
      for (let i = 0; i < rounds; i++) {
        concurrent.push(...(await Promise.all(Array.from({ length: 4 }, () => compareOnce(service.originUrl, token, audio1, audio2)))));
      }
      const figures: Figure[] = [
        { key: 'compare.single.p50_ms', label: 'compare, one upload at a time: p50', value: round(median(single), 1), unit: 'ms' },
        {
          key: 'compare.single.p99_ms',
          label: 'compare, one upload at a time: p99',
          value: round(percentile(single, 0.99), 1),
          unit: 'ms',
        },
        { key: 'compare.concurrent4.p50_ms', label: 'compare, 4 concurrent uploads: p50', value: round(median(concurrent), 1), unit: 'ms' },
        {
          key: 'compare.concurrent4.p99_ms',
          label: 'compare, 4 concurrent uploads: p99',
          value: round(percentile(concurrent, 0.99), 1),
          unit: 'ms',
        },
        {
          key: 'compare.concurrent4_over_single',
          label: 'compare p50 latency, 4 concurrent / one at a time',
          value: round(median(concurrent) / median(single), 2),
          unit: 'ratio',
        },
      ];
      return { figures, notes: [`${single.length} single requests, ${concurrent.length} requests in rounds of 4.`] };
    } finally {
      await service.stop();
    }
  },
};

export default bench;
