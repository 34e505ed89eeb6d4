import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createOriginClient } from '@vip/shared-schema/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../launch/free-port.js';
import { repositoryRoot } from '../support/repository.js';
import { eventually, startOriginPlane } from '../support/service.js';

const run = promisify(execFile);

/** Whether something on this machine accepts a connection on `port`. */
const accepts = (port: number) =>
  new Promise<boolean>((answer) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      answer(true);
    });
    socket.once('error', () => answer(false));
  });
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * The typed client as a user gets it: `npm pack` of client/ (its prepack builds JavaScript and type
 * declarations), the tarball installed into a separate project, then used from plain Node (no
 * TypeScript loader) and type-checked by a TypeScript consumer.
 */
describe('the installable client (@vip/client)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'vip-client-package-'));
  const project = join(folder, 'project');
  let gate: Server;
  let gateUrl: string;

  beforeAll(async () => {
    // A gate that refuses every key the way the real one does, so the installed client parses a real answer.
    gate = createServer((request, response) => {
      response.writeHead(401, { 'content-type': 'application/problem+json', 'x-request-id': 'req-installed-client' });
      response.end(
        JSON.stringify({
          type: 'urn:vip:problem:invalid_credentials',
          title: 'Invalid credentials',
          status: 401,
          detail: 'The API key is not valid.',
          instance: request.url,
          code: 'invalid_credentials',
          request_id: 'req-installed-client',
        }),
      );
    });
    await new Promise<void>((listening) => gate.listen(0, '127.0.0.1', listening));
    gateUrl = `http://127.0.0.1:${(gate.address() as AddressInfo).port}`;

    await run(npm, ['pack', join(repositoryRoot, 'client'), '--pack-destination', folder], { cwd: folder });
    const tarball = readdirSync(folder).find((name) => name.endsWith('.tgz'))!;
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'installs-the-client', private: true, type: 'module' }));
    // The client's dependencies (client/package.json) come from the npm cache that `npm install` filled.
    await run(npm, ['install', join(folder, tarball), '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project });
  }, 240_000);
  afterAll(async () => {
    await new Promise((closed) => gate?.close(closed));
    rmSync(folder, { recursive: true, force: true });
  });

  it('runs on plain Node: the gate client parses a problem, the webhook verifier refuses a forgery', async () => {
    writeFileSync(
      join(project, 'use.mjs'),
      `import { createGateClient, ProblemError, verifyWebhook, WebhookVerificationError } from '@vip/client';
const gate = createGateClient({ baseUrl: process.argv[2], apiKey: 'vip_not-a-real-key' });
const refused = await gate
  .preSynthesisCheck({ voice_id: '00000000-0000-4000-8000-000000000000', platform_name: 'Acme', intended_use: 'audiobook' })
  .catch((error) => error);
const forged = await verifyWebhook('whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=', { 'webhook-id': 'x', 'webhook-timestamp': '1', 'webhook-signature': 'v1,AAAA' }, '{}')
  .catch((error) => error);
console.log(JSON.stringify({
  problem: refused instanceof ProblemError && { status: refused.status, code: refused.code, requestId: refused.requestId },
  forged: forged instanceof WebhookVerificationError,
}));
`,
    );
    const { stdout } = await run(process.execPath, ['use.mjs', gateUrl], { cwd: project });
    expect(JSON.parse(stdout)).toEqual({
      problem: { status: 401, code: 'invalid_credentials', requestId: 'req-installed-client' },
      forged: true,
    });
  });

  it('ships type declarations a TypeScript project checks against', async () => {
    writeFileSync(
      join(project, 'use.ts'),
      `import { createGateClient, isApproved, type PreSynthesisCheckResult } from '@vip/client';
const gate = createGateClient({ baseUrl: 'https://gate.example.com', apiKey: 'vip_key' });
export async function approved(voiceId: string): Promise<boolean> {
  const result: PreSynthesisCheckResult = await gate.preSynthesisCheck({ voice_id: voiceId, platform_name: 'Acme', intended_use: 'audiobook' });
  return isApproved(result);
}
// @ts-expect-error: an intended use outside the enum is a type error
gate.preSynthesisCheck({ voice_id: 'v', platform_name: 'Acme', intended_use: 'karaoke' });
`,
    );
    const tsc = join(repositoryRoot, 'node_modules/typescript/bin/tsc');
    const args = [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--lib',
      'es2023,dom',
      'use.ts',
    ];
    await expect(run(process.execPath, [tsc, ...args], { cwd: project })).resolves.toBeDefined();
  }, 60_000);
  it("runs INTEGRATION.md's local webhook receiver as written: a test delivery from the service verifies, a forgery is refused", async () => {
    const guide = readFileSync(join(repositoryRoot, 'docs/INTEGRATION.md'), 'utf8');
    const block = /```js\n(\/\/ receiver\.mjs[\s\S]*?)```/.exec(guide)?.[1];
    expect(block, 'INTEGRATION.md holds the receiver.mjs block').toBeDefined();
    writeFileSync(join(project, 'receiver.mjs'), block!);

    const origin = await startOriginPlane({ env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
    let receiver: ChildProcess | undefined;
    try {
      const owner = { email: `receiver-${randomUUID()}@example.com`, password: 'a receiver recipe password' };
      const anonymous = createOriginClient({ baseUrl: origin.originUrl });
      await anonymous.auth.register(owner);
      const asOwner = createOriginClient({ baseUrl: origin.originUrl, bearerToken: (await anonymous.auth.login(owner)).access_token });
      const port = await freePort();
      const registered = await asOwner.webhooks.register({ url: `http://127.0.0.1:${port}/`, events: ['voice.deleted'] });

      let printed = '';
      receiver = spawn(process.execPath, ['receiver.mjs', String(port)], {
        cwd: project,
        env: { ...process.env, WEBHOOK_SECRET: registered.secret },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      receiver.stdout!.on('data', (chunk: Buffer) => {
        printed += chunk.toString();
      });
      const printedLine = (pattern: RegExp) =>
        eventually(async () => pattern.test(printed), 20_000).catch(() => {
          throw new Error(`the receiver printed ${JSON.stringify(printed)}, not ${pattern}`);
        });
      // Listening once a connection is taken (a probe that bound the port itself could race the receiver for it).
      await eventually(() => accepts(port), 10_000);

      await asOwner.webhooks.test(registered.webhook_id);
      await printedLine(/^verified \S+ webhook\.test$/m);
      const forged = await fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        headers: { 'webhook-id': 'msg_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
        body: '{"event":"webhook.test"}',
      });
      expect(forged.status).toBe(400);
      await printedLine(/^refused bad_signature$/m);
    } finally {
      receiver?.kill();
      await origin.stop();
      rmSync(origin.dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
