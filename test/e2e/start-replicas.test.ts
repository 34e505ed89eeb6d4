import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, portIsFree } from '../../launch/free-port.js';
import { type OriginFront, RESTING_MS, startOriginFront } from '../../launch/origin-front.js';
import { createScratchServerDatabase } from '../../origin/src/testing/database.js';
import { eventually, json, type RunningService, registeredOwner, startService } from '../support/service.js';

const serverUrl = process.env.TEST_DATABASE_URL;

describe('`npm start -- --replicas N` refuses what it cannot run', () => {
  const dataDirs: string[] = [];
  afterAll(() => {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    // Empty is unset, as for every setting.
    [['--replicas', '2'], { DATABASE_URL: '' }, '[start] --replicas 2 needs DATABASE_URL: replicas share one Postgres server'],
    [['--demo', '--replicas', '3'], { DATABASE_URL: '' }, '[start] --replicas 3 needs DATABASE_URL: replicas share one Postgres server'],
    [
      ['--replicas', '0'],
      { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' },
      '[start] --replicas takes a whole number from 1 to 16 (got "0")',
    ],
    [
      ['--replicas=two'],
      { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' },
      '[start] --replicas takes a whole number from 1 to 16 (got "two")',
    ],
  ])('%j with %j: exits 1, says what to set, writes no key (nor a demo password)', async (args, env, message) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vip-replicas-'));
    dataDirs.push(dataDir);
    const started = startService({ dataDir, args, env });
    await expect(started).rejects.toThrow(/service exited with 1 before it was ready/);
    await expect(started).rejects.toThrow(message);
    // Refused before anything was generated: no keys of a service that never ran.
    expect(readdirSync(dataDir)).toEqual([]);
  });
});

describe.skipIf(!serverUrl)(
  `\`npm start -- --replicas 2\` on one Postgres server${serverUrl ? '' : ' (skipped: TEST_DATABASE_URL is not set)'}`,
  () => {
    let database: { url: string; drop: () => Promise<void> };
    let service: RunningService;

    beforeAll(async () => {
      database = await createScratchServerDatabase(serverUrl!, 'vip_start');
      service = await startService({ args: ['--replicas', '2'], env: { DATABASE_URL: database.url } });
    }, 150_000);

    afterAll(async () => {
      await service?.stop();
      if (service) rmSync(service.dataDir, { recursive: true, force: true });
      await database?.drop();
    });

    const originPort = () => Number(new URL(service.originUrl).port);
    const replicaUrl = (index: number) => `http://127.0.0.1:${originPort() + index}`;

    it('prints where each replica listens, and serves them round robin behind the origin address', async () => {
      expect(service.output()).toContain(`[start] origin-1 serves ${replicaUrl(1)}`);
      expect(service.output()).toContain(`[start] origin-2 serves ${replicaUrl(2)}`);
      expect(service.output()).toMatch(/\[start\] ready in [\d.]+ s: origin http:\/\/127\.0\.0\.1:\d+ \(front of 2 replicas;/);
      const instances = [];
      for (let i = 0; i < 4; i++) instances.push((await json(await fetch(`${service.originUrl}/healthz`))).instance);
      expect(new Set(instances).size).toBe(2);
      expect(instances[0]).not.toBe(instances[1]);
    });

    it('gives every replica one set of keys: a token either signs passes at both, one JWKS, one checkpoint key, one webhook-secret key', async () => {
      const token = await registeredOwner(service.originUrl, { email: 'replicas@example.com', password: 'replicas-owner-password' });
      for (const index of [1, 2]) {
        const listed = await fetch(`${replicaUrl(index)}/api/v1/webhooks`, { headers: { authorization: `Bearer ${token}` } });
        expect(listed.status, `origin-${index} accepts the token`).toBe(200);
      }
      for (const path of ['/.well-known/jwks.json', '/tlog/vkey']) {
        const [first, second] = await Promise.all([1, 2].map(async (index) => (await fetch(`${replicaUrl(index)}${path}`)).text()));
        expect(first, path).toBe(second);
      }
      expect(readdirSync(service.dataDir).filter((name) => name.includes('secrets'))).toEqual(['secrets-encryption.key', 'secrets.json']);
      expect(existsSync(join(service.dataDir, 'pglite'))).toBe(false);
    });

    it('keeps serving when a replica dies, and Ctrl-C stops all of them', async () => {
      const pid = Number(/\[origin-1\] \{[^\n]*"pid":(\d+)/.exec(service.output())?.[1]);
      expect(pid).toBeGreaterThan(0);
      process.kill(pid, 'SIGKILL');
      await eventually(async () => service.output().includes('[start] origin-1 exited'), 10_000);
      expect(service.output()).toContain(`origin-2 still serves ${service.originUrl}`);
      for (let i = 0; i < 4; i++) expect((await fetch(`${service.originUrl}/healthz`)).status).toBe(200);

      expect(await service.stop()).toBe(0);
      for (const port of [originPort(), originPort() + 2, Number(new URL(service.edgeUrl).port)]) {
        await eventually(() => portIsFree(port), 10_000);
      }
    }, 60_000);
  },
);

describe('the origin front of --replicas', () => {
  let front: OriginFront;
  const replicas: { port: number; server: Server; seen: string[] }[] = [];

  const replica = async (answer?: (req: IncomingMessage, res: ServerResponse, body: string) => void) => replicaOn(await freePort(), answer);
  const replicaOn = async (port: number, answer?: (req: IncomingMessage, res: ServerResponse, body: string) => void) => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        seen.push(`${req.method} ${req.url} ${body}`);
        if (answer) answer(req, res, body);
        else res.writeHead(200, { 'content-type': 'text/plain', 'x-replica': String(port) }).end(body);
      });
    });
    await new Promise<void>((listening) => server.listen(port, '127.0.0.1', listening));
    const entry = { port, server, seen };
    replicas.push(entry);
    return entry;
  };

  afterEach(async () => {
    await front?.close();
    for (const { server } of replicas.splice(0)) {
      server.closeAllConnections();
      server.close();
    }
  });

  it('sends each request to the next replica in turn, bodies and answers unchanged', async () => {
    const [a, b] = [await replica(), await replica()];
    front = await startOriginFront(await freePort(), [a.port, b.port]);
    const answers = [];
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${front.url}/echo?n=${i}`, { method: 'POST', body: `body-${i}` });
      expect(await response.text()).toBe(`body-${i}`);
      answers.push(response.headers.get('x-replica'));
    }
    expect(answers).toEqual([a.port, b.port, a.port, b.port].map(String));
    expect(a.seen).toEqual(['POST /echo?n=0 body-0', 'POST /echo?n=2 body-2']);
  });

  it('sends a request a replica refuses to another one, leaves the refusing replica out for a while, then tries it again', async () => {
    const live = await replica();
    const late = await freePort();
    front = await startOriginFront(await freePort(), [late, live.port]);
    const write = async (i: number) => {
      const response = await fetch(`${front.url}/write`, { method: 'POST', body: `write-${i}` });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(`write-${i}`);
      return response.headers.get('x-replica');
    };
    // Refused (nothing listens yet): the request goes to the live replica.
    expect(await write(0)).toBe(String(live.port));
    // Listening now, but resting: the next requests still go to the live one.
    const started = await replicaOn(late);
    const resting = [await write(1), await write(2), await write(3)];
    expect(resting).toEqual([live.port, live.port, live.port].map(String));
    await new Promise((r) => setTimeout(r, RESTING_MS + 100));
    const rejoined = new Set([await write(4), await write(5)]);
    expect(rejoined).toEqual(new Set([String(live.port), String(late)]));
    expect(started.seen).toHaveLength(1);
  });

  it('answers 503 problem+json with Retry-After when no replica serves, or when one dies before answering', async () => {
    const dying = await replica((req) => req.socket.destroy());
    front = await startOriginFront(await freePort(), [dying.port]);
    const cut = await fetch(`${front.url}/api/v1/voices`, { method: 'POST', body: '{}' });
    expect(cut.status).toBe(503);
    expect(cut.headers.get('content-type')).toContain('application/problem+json');
    expect(cut.headers.get('retry-after')).toBe('1');
    expect(await cut.json()).toMatchObject({ status: 503, code: 'unavailable', instance: '/api/v1/voices' });

    await new Promise<void>((closed) => {
      dying.server.closeAllConnections();
      dying.server.close(() => closed());
    });
    const none = await fetch(`${front.url}/healthz`);
    expect(none.status).toBe(503);
    expect(await none.json()).toMatchObject({ code: 'unavailable', detail: 'No origin replica is serving.' });
  });

  it('answers a request its parser refuses as the origin does: problem+json, connection closed', async () => {
    const live = await replica();
    front = await startOriginFront(await freePort(), [live.port]);
    const raw = await new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(front.url).port), '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
      });
      socket.on('close', () => resolve(text));
      socket.end('NOT HTTP\r\n\r\n');
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('application/problem+json');
    expect(raw).toContain('"code":"malformed_request"');
    expect(live.seen).toEqual([]);
  });
});
