import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { repositoryRoot } from './repository.js';

export const wranglerConfigPath = join(repositoryRoot, 'wrangler.toml');

/**
 * The Workers platform's limits on a Worker's upload (developers.cloudflare.com/workers/platform/limits):
 * the gzip-compressed size on the Free and on the Paid plan, and the uncompressed size on any plan.
 */
export const WORKER_SIZE_LIMITS = { freeGzipBytes: 3 * 2 ** 20, paidGzipBytes: 10 * 2 ** 20, uncompressedBytes: 64 * 2 ** 20 };

export interface WorkerBundle {
  outdir: string;
  /** The bundled Worker module, as `wrangler deploy` would upload it. */
  code: string;
  bytes: number;
  gzipBytes: number;
  /** What wrangler printed: the upload size and the bindings of the environment. */
  output: string;
}

/**
 * `wrangler deploy --dry-run --outdir …` for an environment of wrangler.toml: bundles the Worker as a
 * deploy would, offline (no account, no network), and writes it to a fresh folder.
 */
export async function buildWorkerBundle(environment: string): Promise<WorkerBundle> {
  const outdir = mkdtempSync(join(tmpdir(), 'vip-worker-bundle-'));
  const wrangler = createRequire(import.meta.url).resolve('wrangler/bin/wrangler.js');
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [wrangler, 'deploy', '--dry-run', '--config', wranglerConfigPath, '--env', environment, '--outdir', outdir],
    // No telemetry and no update check: nothing leaves the machine.
    { cwd: repositoryRoot, env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' }, maxBuffer: 16 * 2 ** 20 },
  );
  const code = readFileSync(join(outdir, 'index.js'), 'utf8');
  return { outdir, code, bytes: Buffer.byteLength(code), gzipBytes: gzipSync(code).length, output: `${stdout}\n${stderr}` };
}

/** The names the bundled module exports besides its default handler: the Durable Object classes. */
export function exportedClasses(code: string): string[] {
  const exports = [...code.matchAll(/^export\s*\{([^}]*)\}/gm)].flatMap((match) => match[1]!.split(','));
  return exports
    .map((name) => name.trim())
    .filter((name) => name && !/\bas default$/.test(name))
    .map((name) => name.split(/\s+as\s+/).at(-1)!)
    .sort();
}
