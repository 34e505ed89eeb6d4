import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/free-port.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface RunningService {
  originUrl: string;
  edgeUrl: string;
  dataDir: string;
  /** Everything both planes printed so far. */
  output: () => string;
  /** Sends SIGINT as Ctrl-C does and resolves with the exit code. */
  stop: () => Promise<number | null>;
}

export interface ServiceOptions {
  dataDir?: string;
  env?: Record<string, string>;
}

/** Starts the service exactly as `npm start` does, on free ports and a private data folder. */
export async function startService(options: ServiceOptions = {}): Promise<RunningService> {
  const [originPort, edgePort] = [await freePort(), await freePort()];
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'vip-e2e-'));
  const child: ChildProcess = spawn(join(root, 'node_modules/.bin/tsx'), [join(root, 'scripts/start.ts')], {
    cwd: root,
    env: { ...process.env, ORIGIN_PORT: String(originPort), EDGE_PORT: String(edgePort), DATA_DIR: dataDir, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: false,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });

  await new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not become ready:\n${output}`)), 110_000);
    const check = setInterval(() => {
      if (output.includes('[start] ready')) {
        clearInterval(check);
        clearTimeout(timer);
        resolveReady();
      }
    }, 100);
    child.once('exit', (code) => {
      clearInterval(check);
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before it was ready:\n${output}`));
    });
  });

  return {
    originUrl: `http://127.0.0.1:${originPort}`,
    edgeUrl: `http://127.0.0.1:${edgePort}`,
    dataDir,
    output: () => output,
    stop: () =>
      new Promise((resolveExit) => {
        if (child.exitCode !== null) return resolveExit(child.exitCode);
        child.once('exit', (code) => resolveExit(code));
        child.kill('SIGINT');
      }),
  };
}

export async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** Polls `probe` until it returns true or the deadline passes; resolves with the elapsed milliseconds. */
export async function eventually(probe: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    if (await probe()) return performance.now() - start;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}
