import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOrigin, type TestOrigin } from '../../origin/src/testing/origin.js';
import { repositoryRoot } from '../support/repository.js';

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { source: { ref: string }; pointer: string }[];
}

/** The part of the edge's Hono app this test calls. */
interface EdgeApp {
  request(path: string, init: RequestInit, env: Record<string, string>): Promise<Response>;
}

/**
 * The edge Worker's app, run in Node: its document needs no Worker binding. Loaded by path, since
 * its modules are type-checked with the Workers' types (`tsc -p edge-gate`), which Node's tests lack.
 */
async function edgeApp(): Promise<EdgeApp> {
  const load = (file: string) => import(pathToFileURL(join(repositoryRoot, 'edge-gate/src', file)).href);
  const [{ createApp }, { systemRuntime }] = (await Promise.all([load('app.ts'), load('runtime.ts')])) as [
    { createApp: (runtime: unknown) => EdgeApp },
    { systemRuntime: unknown },
  ];
  return createApp(systemRuntime);
}

/** What the edge Worker needs to serve its document; no request leaves this process. */
const edgeEnv = (variant: 'A' | 'B') => ({
  GATE_VARIANT: variant,
  ORIGIN_URL: 'http://origin.test',
  LICENSING_URL: 'http://origin.test/licensing',
  INTERNAL_SECRET: 'not-a-secret-of-any-deployment',
  AUTH_TOKEN_PRIVATE_JWK: JSON.stringify(generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })),
});

/**
 * Both planes' `/openapi.json`, as served, linted by Redocly CLI with its recommended rules (no
 * configuration: what `npx redocly lint` runs on a downloaded document): no error, no warning.
 */
describe('the OpenAPI documents, under `redocly lint` (recommended rules)', () => {
  let origin: TestOrigin;
  const folder = mkdtempSync(join(tmpdir(), 'vip-openapi-'));
  beforeAll(async () => {
    origin = await startTestOrigin();
  });
  afterAll(async () => {
    await origin?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('have no problem: the origin, and the edge in each gate variant', async () => {
    const edge = await edgeApp();
    const documents = {
      'origin.json': (await origin.app.inject({ method: 'GET', url: '/openapi.json' })).body,
      'edge-a.json': await (await edge.request('/openapi.json', {}, edgeEnv('A'))).text(),
      'edge-b.json': await (await edge.request('/openapi.json', {}, edgeEnv('B'))).text(),
    };
    for (const [name, body] of Object.entries(documents)) writeFileSync(join(folder, name), body);
    const lint = spawnSync(join(repositoryRoot, 'node_modules/.bin/redocly'), ['lint', '--format=json', ...Object.keys(documents)], {
      cwd: folder,
      encoding: 'utf8',
      // Nothing leaves the machine: no usage report, no check for a newer version.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    // One pretty-printed report per document, each opening right after the previous one's closing `}`.
    const reports = lint.stdout
      .trim()
      .split(/(?<=^\})(?=\{$)/m)
      .map((part) => JSON.parse(part) as { totals: { errors: number; warnings: number }; problems: LintProblem[] });
    expect(reports).toHaveLength(Object.keys(documents).length);
    const problems = reports.flatMap((report) =>
      report.problems.map(
        ({ ruleId, severity, message, location }) =>
          `${severity} ${ruleId} at ${location[0]?.source.ref}${location[0]?.pointer}: ${message}`,
      ),
    );
    expect(problems).toEqual([]);
    expect(reports.map((report) => report.totals)).toEqual(reports.map(() => expect.objectContaining({ errors: 0, warnings: 0 })));
    expect(lint.status).toBe(0);
  }, 60_000);
});
