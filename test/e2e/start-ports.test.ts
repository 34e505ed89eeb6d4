import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../launch/free-port.js';
import { type PlaneLaunch, waitUntilServing } from '../../launch/planes.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Another service on a port `npm start` wants, which answers everything a plane would (its OpenAPI
 * document, /healthz) as a running copy of this service does, and records every request it gets.
 */
async function impostor(port: number): Promise<{ server: Server; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(request.url === '/healthz' ? JSON.stringify({ status: 'ok', instance: 'someone-else' }) : '{"openapi":"3.1.0"}');
  });
  await new Promise<void>((listening) => server.listen(port, '127.0.0.1', listening));
  return { server, requests };
}

function runStart(env: Record<string, string>, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(join(root, 'node_modules/.bin/tsx'), [join(root, 'scripts/start.ts'), ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // Bounded: a start that went on to launch its planes would not exit by itself.
  const timer = setTimeout(() => child.kill('SIGINT'), 30_000);
  return new Promise((exited) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      exited({ code, stdout, stderr });
    }),
  );
}

describe('`npm start` on ports another service holds', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  it.each([
    ['ORIGIN_PORT', 'origin'],
    ['EDGE_PORT', 'edge'],
  ] as const)('stops with one line naming the port and %s, and neither starts, writes nor seeds anything', async (setting, _plane) => {
    const [originPort, edgePort] = [await freePort(), await freePort()];
    const takenPort = setting === 'ORIGIN_PORT' ? originPort : edgePort;
    const other = await impostor(takenPort);
    cleanups.push(() => other.server.close());
    const dataDir = join(mkdtempSync(join(tmpdir(), 'vip-ports-')), 'data');
    cleanups.push(() => rmSync(dirname(dataDir), { recursive: true, force: true }));

    const run = await runStart({ ORIGIN_PORT: String(originPort), EDGE_PORT: String(edgePort), DATA_DIR: dataDir }, ['--demo']);

    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('ready');
    expect(run.stderr.trim()).toBe(
      `[start] port ${takenPort} (${setting}) is already in use by another process: stop it, or set ${setting} to a free port`,
    );
    expect(other.requests).toEqual([]);
    // Nothing generated for a service that never started: no secrets, no demo password.
    expect(existsSync(dataDir)).toBe(false);
  });

  it('does not take another process answering the port for the plane it launched', async () => {
    const port = await freePort();
    const other = await impostor(port);
    cleanups.push(() => other.server.close());
    // A plane that has not bound its port yet (a process that just sleeps), while the other answers there.
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { stdio: 'ignore' });
    cleanups.push(() => child.kill('SIGKILL'));
    const launch: PlaneLaunch = {
      name: 'origin',
      url: `http://127.0.0.1:${port}`,
      port,
      portSetting: 'ORIGIN_PORT',
      instance: 'the-one-just-started',
      command: process.execPath,
      args: [],
      cwd: root,
      env: {},
    };

    await expect(waitUntilServing(launch, child, Date.now() + 10_000)).rejects.toThrow(
      `port ${port} (ORIGIN_PORT) is answered by another process, not the origin just started: stop it, or set ORIGIN_PORT to a free port`,
    );
  });
});
