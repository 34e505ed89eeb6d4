import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { repositoryRoot } from '../../support/repository.js';

export interface ServedWorker {
  url: string;
  /** The worker's workerd process; undefined where /proc cannot tell. */
  pid: number | undefined;
  /** CPU seconds the worker's workerd process has used so far; undefined where /proc cannot tell. */
  cpuSeconds(): number | undefined;
  dispose(): Promise<void>;
}

/** The processes this one has started (Linux). */
function childPids(): Set<number> {
  try {
    const tasks = readdirSync('/proc/self/task');
    return new Set(
      tasks.flatMap((task) => readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number)),
    );
  } catch {
    return new Set();
  }
}

const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process, from the fields after its parenthesised name in /proc/<pid>/stat. */
function processCpuSeconds(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop()!.trim().split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

const quietWrangler = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_LOG: 'error' };

/**
 * Where KV and Durable Object storage live during a run: tmpfs when the machine has one. On the
 * shared disk each storage commit waits for a sync whose cost swings with other people's jobs
 * (no-record p50 18 ms there against 4 ms on tmpfs, same load); production storage is not this disk.
 */
const storageParent = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/**
 * Serves a Worker the way production runs it, minus the network: the bundle `wrangler deploy`
 * would upload, on workerd through Miniflare, with the bindings of its wrangler.toml. No dev proxy
 * sits in front (wrangler dev adds one), so a cheap Worker is not flattered by a fixed overhead.
 * The Worker's log lines are read and dropped.
 */
export async function serveWorker(configPath: string, settings: Record<string, string> = {}): Promise<ServedWorker> {
  const outDir = mkdtempSync(join(tmpdir(), 'vip-bench-bundle-'));
  const storageDir = mkdtempSync(join(storageParent, 'vip-bench-storage-'));
  const removeDirs = () => {
    for (const dir of [outDir, storageDir]) rmSync(dir, { recursive: true, force: true });
  };
  // The runtime's own errors, kept to explain a Worker that does not start; log lines are dropped.
  let runtimeErrors = '';
  try {
    await promisify(execFile)(
      join(repositoryRoot, 'node_modules/.bin/wrangler'),
      ['deploy', '--dry-run', '--config', configPath, '--outdir', outDir],
      { cwd: repositoryRoot, env: quietWrangler },
    );
    const { workerOptions } = unstable_getMiniflareWorkerOptions(configPath);
    const before = childPids();
    const miniflare = new Miniflare({
      ...workerOptions,
      modules: true,
      scriptPath: join(outDir, 'index.js'),
      modulesRoot: outDir,
      bindings: { ...workerOptions.bindings, ...settings },
      cf: false,
      defaultPersistRoot: storageDir,
      kvPersist: true,
      durableObjectsPersist: true,
      host: '127.0.0.1',
      port: 0,
      handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
        stdout.resume();
        stderr.on('data', (chunk: Buffer) => {
          runtimeErrors = (runtimeErrors + chunk.toString()).slice(-4000);
        });
      },
    });
    const url = await miniflare.ready.then(
      (ready) => ready.origin,
      async (error: unknown) => {
        await miniflare.dispose();
        throw new Error(`${configPath} did not start: ${String(error)}\n${runtimeErrors}`);
      },
    );
    // Miniflare keeps its workerd process to itself: the child that appeared while it started is it
    // (so start one worker at a time).
    const started = [...childPids()].filter((pid) => !before.has(pid));
    const runtimePid = started.length === 1 ? started[0] : undefined;
    return {
      url,
      pid: runtimePid,
      cpuSeconds: () => (runtimePid === undefined ? undefined : processCpuSeconds(runtimePid)),
      dispose: async () => {
        await miniflare.dispose();
        removeDirs();
      },
    };
  } catch (error) {
    removeDirs();
    throw error;
  }
}
