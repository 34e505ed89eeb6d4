import { rmSync } from 'node:fs';
import { buildWorkerBundle, WORKER_SIZE_LIMITS } from '../support/worker-bundle.js';
import type { Bench } from './bench.js';

const KIB = 1024;
const kib = (bytes: number) => Math.round((bytes / KIB) * 10) / 10;

const bench: Bench = {
  title: 'Edge Worker bundle size against the Workers limits',
  method: [
    '`wrangler deploy --dry-run --env production --outdir <tmp>` bundles the Worker offline exactly as a deploy would upload it',
    '(test/support/worker-bundle.ts); the sizes are of that `index.js`, uncompressed and gzip-compressed (Node zlib, default level),',
    'against the platform limits: 3 MiB compressed on the Workers Free plan, 10 MiB on Paid, 64 MiB uncompressed.',
    'The same build is asserted under the Free plan limit by test/deploy/production-config.test.ts.',
  ].join(' '),
  async run() {
    const bundle = await buildWorkerBundle('production');
    rmSync(bundle.outdir, { recursive: true, force: true });
    return {
      figures: [
        {
          key: 'bundle.gzip_kib',
          label: 'Worker upload, gzip',
          value: kib(bundle.gzipBytes),
          unit: 'KiB',
          goal: { atMost: WORKER_SIZE_LIMITS.freeGzipBytes / KIB },
        },
        {
          key: 'bundle.free_plan_share',
          label: 'share of the Free plan limit (3 MiB compressed)',
          value: Math.round((bundle.gzipBytes / WORKER_SIZE_LIMITS.freeGzipBytes) * 1000) / 1000,
          unit: 'ratio',
          goal: { atMost: 1 },
        },
        {
          key: 'bundle.paid_plan_share',
          label: 'share of the Paid plan limit (10 MiB compressed)',
          value: Math.round((bundle.gzipBytes / WORKER_SIZE_LIMITS.paidGzipBytes) * 1000) / 1000,
          unit: 'ratio',
          goal: { atMost: 1 },
        },
        {
          key: 'bundle.uncompressed_kib',
          label: 'Worker upload, uncompressed',
          value: kib(bundle.bytes),
          unit: 'KiB',
          goal: { atMost: WORKER_SIZE_LIMITS.uncompressedBytes / KIB },
        },
      ],
      notes: [`wrangler's own count: ${bundle.output.match(/Total Upload: [^\n]*/)?.[0] ?? 'not printed'}.`],
    };
  },
};

export default bench;
