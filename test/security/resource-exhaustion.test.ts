import { randomBytes, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { limits } from '@vip/shared-schema';
import { withFreeBoxes } from '@vip/shared-schema/testing/hostile-files';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_REGISTRATIONS_PER_MINUTE } from '../../origin/src/config.js';
import { audioFixture } from '../../origin/src/testing/provenance-files.js';
import { eventually, json, post } from '../support/service.js';
import { type Actor, expectProblem, GATE_PATH, type Platform, REDEEM_PATH, Security, SPEAKERS } from './support.js';

/**
 * Threat: unrestricted resource consumption (OWASP API4): bodies over the limits, audio over 20 MB,
 * too many files, deeply nested JSON, floods of small requests (the edge's rate limits), a
 * slowloris client trickling its body (the origin's request timeout, REQUEST_TIMEOUT_SECONDS), and
 * an upload built to keep a parser busy (issue 31: an M4A of 100,000 boxes).
 */

const REQUEST_TIMEOUT_SECONDS = 2;
const JSON_LIMIT = 64 * 1024;
const AUDIO_LIMIT = 20 * 1024 * 1024;

describe('resource exhaustion', () => {
  let s: Security;
  let owner: Actor;
  let platform: Platform;

  beforeAll(async () => {
    s = await Security.start('exhaust', { REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_SECONDS) });
    owner = await s.owner('exhaust-owner');
    platform = await s.platform('Exhaust Platform');
    await s.keyLive(platform.apiKey, platform.name);
  }, 180_000);

  afterAll(async () => {
    await s?.stop();
  });

  /** JSON bodies over the 64 KiB limit, each as one string field or as many fields. */
  const oversized: { name: string; body: () => string }[] = [
    { name: 'one long string', body: () => JSON.stringify({ email: 'x@owners.example', password: 'p'.repeat(JSON_LIMIT + 1) }) },
    { name: 'many fields', body: () => JSON.stringify(Object.fromEntries(Array.from({ length: 9000 }, (_, i) => [`field_${i}`, i]))) },
    { name: 'a huge array', body: () => JSON.stringify({ events: Array.from({ length: 20_000 }, () => 'voice.deleted') }) },
    { name: 'ten times the limit', body: () => JSON.stringify({ token: 'x'.repeat(10 * JSON_LIMIT) }) },
  ];
  const jsonTargets = (): { name: string; url: string; headers: Record<string, string> }[] => [
    { name: 'origin login', url: `${s.origin}/api/v1/auth/login`, headers: {} },
    { name: 'origin webhooks', url: `${s.origin}/api/v1/webhooks/register`, headers: owner.auth },
    { name: 'edge gate', url: `${s.edge}${GATE_PATH}`, headers: { 'x-api-key': platform.apiKey } },
    { name: 'edge redeem', url: `${s.edge}${REDEEM_PATH}`, headers: { 'x-api-key': platform.apiKey } },
  ];

  it('refuses JSON bodies over the limit with 413 problem+json on both planes', async () => {
    for (const target of jsonTargets()) {
      for (const { name, body } of oversized) {
        const response = await fetch(target.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...target.headers },
          body: body(),
        });
        try {
          await expectProblem(response, 413, 'payload_too_large');
        } catch (error) {
          throw new Error(`${target.name}, ${name}: ${(error as Error).message}`);
        }
      }
    }
  });

  it('answers a long request target and large headers with problem+json over a real connection to each running plane', async () => {
    // 60 KiB: past the limits of both planes, and under workerd's own request-line limit (64 KiB),
    // beyond which the runtime answers before the Worker runs (docs/CONTRACT.md#transport-errors).
    const longQuery = `?q=${'a'.repeat(60 * 1024)}`;
    const largeHeader = { 'x-padding': 'b'.repeat(100 * 1024) };
    const demoPath = '/api/v1/protect/demo/pre-synthesis-check';
    await expectProblem(await fetch(`${s.edge}${demoPath}${longQuery}`), 414, 'uri_too_long');
    await expectProblem(await fetch(`${s.edge}${demoPath}`, { headers: largeHeader }), 431, 'headers_too_large');
    await expectProblem(await fetch(`${s.origin}/healthz${longQuery}`), 431, 'headers_too_large');
    await expectProblem(await fetch(`${s.origin}/healthz`, { headers: largeHeader }), 431, 'headers_too_large');
  });

  it('refuses an oversized body sent chunked, without a Content-Length, on both planes', async () => {
    const chunks = [`{"token":"${'x'.repeat(16 * 1024)}`, ...Array.from({ length: 7 }, () => 'x'.repeat(16 * 1024)), '"}'];
    for (const target of jsonTargets()) {
      await expectProblem(
        await answerToChunked(target.url, { 'content-type': 'application/json', ...target.headers }, chunks),
        413,
        'payload_too_large',
      );
    }
  });

  it('answers deeply nested JSON with 422, not a crash, on both planes', async () => {
    const nested = (depth: number) => `{"token":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    for (const target of jsonTargets()) {
      for (const depth of [1_000, 30_000]) {
        const response = await fetch(target.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...target.headers },
          body: nested(depth),
        });
        await expectProblem(response, 422);
      }
    }
    expect((await fetch(`${s.origin}/openapi.json`)).status).toBe(200);
    expect((await fetch(`${s.edge}/openapi.json`)).status).toBe(200);
  });

  /** Audio the engine must never see: each over 20 MB, or too many files, or a text field too long. */
  const audioAbuse: {
    name: string;
    route: 'enroll' | 'compare';
    form: (consentId: string) => Promise<FormData>;
    status: number;
    code: string;
  }[] = [
    {
      name: 'one file over 20 MB (enroll)',
      route: 'enroll',
      status: 413,
      code: 'payload_too_large',
      form: async (consentId) => {
        const form = new FormData();
        form.set('name', 'Too big');
        form.set('consent_id', consentId);
        form.append('audio', new Blob([randomBytes(AUDIO_LIMIT + 1024)], { type: 'audio/wav' }), 'big.wav');
        return form;
      },
    },
    {
      name: 'audio1 over 20 MB (compare)',
      route: 'compare',
      status: 413,
      code: 'payload_too_large',
      form: async () => {
        const form = new FormData();
        form.append('audio1', new Blob([randomBytes(AUDIO_LIMIT + 1024)], { type: 'audio/wav' }), 'big.wav');
        form.append('audio2', new Blob([randomBytes(1024)], { type: 'audio/wav' }), 'small.wav');
        return form;
      },
    },
    {
      name: 'eleven files (enroll)',
      route: 'enroll',
      status: 422,
      code: 'validation_failed',
      form: async (consentId) => s.enrollForm('Too many', consentId, [...SPEAKERS.b, SPEAKERS.a[0]!]),
    },
    {
      name: 'a 2 kB name (enroll)',
      route: 'enroll',
      status: 422,
      code: 'validation_failed',
      form: async (consentId) => s.enrollForm('n'.repeat(2048), consentId, SPEAKERS.a.slice(0, 1)),
    },
  ];

  it('refuses audio over 20 MB with 413, and too many files or long fields with 422, creating no voice', async () => {
    for (const abuse of audioAbuse) {
      const url = `${s.origin}/api/v1/${abuse.route === 'enroll' ? 'voices/enroll' : 'detection/compare'}`;
      const response = await fetch(url, { method: 'POST', headers: owner.auth, body: await abuse.form(await s.consent(owner)) });
      try {
        await expectProblem(response, abuse.status, abuse.code);
      } catch (error) {
        throw new Error(`${abuse.name}: ${(error as Error).message}`);
      }
    }
    const voices = await json(await fetch(`${s.origin}/api/v1/voices`, { headers: owner.auth }));
    expect(voices.voices).toEqual([]);
  });

  it('rate-limits the demo per client address: 429 with Retry-After and RateLimit headers', async () => {
    const demo = () => fetch(`${s.edge}/api/v1/protect/demo/pre-synthesis-check`);
    const first = await demo();
    expect(first.status).toBe(200);
    const policy = first.headers.get('ratelimit-policy');
    expect(policy).toMatch(/q=100;w=3600/);
    let remaining = Number(/r=(\d+)/.exec(first.headers.get('ratelimit') ?? '')?.[1]);
    expect(remaining).toBe(99);
    let last = first;
    for (let i = 0; i < 120 && last.status === 200; i += 1) {
      last = await demo();
      if (last.status === 200) {
        const now = Number(/r=(\d+)/.exec(last.headers.get('ratelimit') ?? '')?.[1]);
        expect(now).toBe(remaining - 1);
        remaining = now;
      }
    }
    await expectProblem(last, 429, 'rate_limited');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last.headers.get('ratelimit')).toMatch(/r=0;t=\d+/);
    expect(last.headers.get('ratelimit-policy')).toBe(policy);
  });

  /**
   * Calls `send` until it is refused (a fixed one-minute window may end part-way, so at most twice the
   * limit and two more), checking the policy on each admitted answer; answers the refusal.
   */
  async function floodUntilRefused(send: (attempt: number) => Promise<Response>, perMinute: number): Promise<Response> {
    for (let attempt = 0; attempt < 2 * perMinute + 2; attempt++) {
      const answer = await send(attempt);
      if (answer.status !== 201) return answer;
      expect(answer.headers.get('ratelimit-policy')).toBe(`"default";q=${perMinute};w=60`);
    }
    throw new Error(`never refused in ${2 * perMinute + 2} calls`);
  }

  it('rate-limits registration per client address: 429 with Retry-After and RateLimit headers, and no account past it', async () => {
    const password = 'flood-password-long-enough';
    const emailOf = (attempt: number) => `flood-${attempt}-${randomUUID().slice(0, 8)}@owners.example`;
    let lastEmail = '';
    const refused = await floodUntilRefused((attempt) => {
      lastEmail = emailOf(attempt);
      return post(`${s.origin}/api/v1/auth/register`, { email: lastEmail, password });
    }, DEFAULT_REGISTRATIONS_PER_MINUTE);
    await expectProblem(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/r=0;t=\d+/);
    await expectProblem(await post(`${s.origin}/api/v1/auth/login`, { email: lastEmail, password }), 401, 'invalid_credentials');
  });

  it('rate-limits spoken-consent challenges per owner: 429 with Retry-After and RateLimit headers', async () => {
    const refused = await floodUntilRefused(
      () => post(`${s.origin}/api/v1/consents/challenges`, {}, owner.auth),
      limits.consentChallengesPerOwnerPerMinute,
    );
    await expectProblem(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/r=0;t=\d+/);
  });

  it('rate-limits the gate per credential at 1,000 a minute, and only that credential', async () => {
    const key = await s.apiKey(platform.platformId);
    const gate = (apiKey: string) =>
      post(
        `${s.edge}${GATE_PATH}`,
        { voice_id: randomUUID(), platform_name: platform.name, intended_use: 'audiobook' },
        { 'x-api-key': apiKey },
      );
    // Fixed one-minute windows, and the flood may straddle two: rather than wait for a fresh one,
    // check that the quota counted down through every value from 999 to 0 and never beyond.
    let refused: Response | null = null;
    const remainingSeen = new Set<number>();
    const remainingOf = (response: Response) => Number(/r=(\d+)/.exec(response.headers.get('ratelimit') ?? '')?.[1]);
    // Until the edge index has the new key the gate answers 401; its first 200 already counts.
    await eventually(async () => {
      const response = await gate(key.apiKey);
      if (response.status === 200) remainingSeen.add(remainingOf(response));
      return response.status === 200;
    }, 10_000);
    let sent = 0;
    while (!refused && sent < 2100) {
      const batch = await Promise.all(Array.from({ length: 25 }, () => gate(key.apiKey)));
      sent += batch.length;
      for (const response of batch) {
        if (response.status !== 200) {
          refused ??= response;
          continue;
        }
        remainingSeen.add(remainingOf(response));
      }
    }
    expect(refused).not.toBeNull();
    await expectProblem(refused!, 429, 'rate_limited');
    expect(remainingSeen.size).toBe(1000);
    expect(Math.min(...remainingSeen)).toBe(0);
    expect(Math.max(...remainingSeen)).toBe(999);
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused!.headers.get('ratelimit')).toMatch(/r=0;t=\d+/);
    expect(refused!.headers.get('ratelimit-policy')).toMatch(/q=1000;w=60/);
    // Another credential of the same platform has its own bucket.
    expect((await gate(platform.apiKey)).status).toBe(200);
  }, 120_000);

  it('refuses the issue’s M4A of 100,000 boxes at once over real connections, /healthz answering throughout', async () => {
    // Over real connections, as the probe sent it (`curl -F audio=@b.m4a` beside `curl /healthz`); the
    // million-box file and the assertion flood are origin/src/provenance/provenance.test.ts's. A connection
    // opened beforehand: a first fetch measures the client's set-up, not the origin's answer.
    const form = (count: number) => {
      const body = new FormData();
      body.append('audio', new Blob([withFreeBoxes(audioFixture('a.m4a'), count)]), 'b.m4a');
      return body;
    };
    // The route warmed up first (its first call loads what it needs); then the file.
    await expectProblem(await fetch(`${s.origin}/api/v1/provenance/verify`, { method: 'POST', body: form(3_000) }), 413);
    expect((await fetch(`${s.origin}/healthz`)).status).toBe(200);
    const body = form(100_000);
    const started = performance.now();
    let answered = false;
    const upload = fetch(`${s.origin}/api/v1/provenance/verify`, { method: 'POST', body }).finally(() => {
      answered = true;
    });
    const healthz: number[] = [];
    do {
      const asked = performance.now();
      expect((await fetch(`${s.origin}/healthz`)).status).toBe(200);
      healthz.push(performance.now() - asked);
      await new Promise((resolve) => setTimeout(resolve, 10));
    } while (!answered);
    const problem = await expectProblem(await upload, 413, 'payload_too_large');
    expect(problem.detail).toMatch(/more than 2048 boxes/);
    // Before the bounds this file held the origin's event loop for 58 s. The 100 ms is asserted in
    // process (origin/src/provenance/provenance.test.ts); across processes on a loaded two-core box the
    // scheduler alone costs more (150–350 ms measured at a load of 15), so the bound here is one second.
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(Math.max(...healthz), healthz.map(Math.round).join(' ')).toBeLessThan(1_000);
  });

  it('cuts off a client that trickles its body, while other requests are served', async () => {
    const { hostname, port } = new URL(s.origin);
    const slowClients: { socket: Socket; closedAfterMs: Promise<number>; head: () => string }[] = [];
    const started = performance.now();
    for (let i = 0; i < 20; i += 1) {
      const socket = connect(Number(port), hostname);
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString();
      });
      socket.on('error', () => {});
      const closedAfterMs = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now() - started)));
      socket.write(
        `POST /api/v1/auth/login HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
      );
      const trickle = setInterval(() => {
        if (!socket.destroyed) socket.write(' ');
      }, 200);
      socket.on('close', () => clearInterval(trickle));
      slowClients.push({ socket, closedAfterMs, head: () => received });
    }
    // Meanwhile the origin answers everyone else at once.
    for (let i = 0; i < 5; i += 1) {
      const t0 = performance.now();
      expect((await fetch(`${s.origin}/openapi.json`)).status).toBe(200);
      expect((await post(`${s.origin}/api/v1/auth/login`, { email: owner.email, password: owner.password })).status).toBe(200);
      expect(performance.now() - t0).toBeLessThan(1500);
    }
    const closedAfter = await Promise.race([
      Promise.all(slowClients.map((c) => c.closedAfterMs)),
      new Promise<null>((r) => setTimeout(() => r(null), 15_000)),
    ]);
    for (const c of slowClients) c.socket.destroy();
    expect(closedAfter, 'the trickling clients were never cut off').not.toBeNull();
    for (const ms of closedAfter!) {
      expect(ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_SECONDS * 1000 - 100);
      expect(ms).toBeLessThan(REQUEST_TIMEOUT_SECONDS * 1000 + 6000);
    }
    for (const c of slowClients) expect(c.head()).toMatch(/^(HTTP\/1\.1 408|$)/);
  }, 30_000);
});

/**
 * A server that answers 413 before it has read the whole body closes with unread bytes, and TCP may
 * then reset the connection before the client reads the answer. That race is the transport's, not a
 * missing refusal: up to three attempts, and the answer must still be a 413 problem.
 */
async function answerToChunked(url: string, headers: Record<string, string>, chunks: string[]): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await postChunked(url, headers, chunks);
    } catch (error) {
      if (attempt === 3 || (error as { code?: string }).code !== 'EPIPE') throw error;
    }
  }
}

/**
 * POSTs `chunks` with chunked transfer encoding (no Content-Length) and resolves with the answer. A
 * server may answer 413 and close before the client has written everything; the client's EPIPE that
 * follows is expected then (fetch would report it instead of the answer), so only a missing answer fails.
 */
function postChunked(url: string, headers: Record<string, string>, chunks: string[]): Promise<Response> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => {
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') answerHeaders.set(name, value);
        resolve(new Response(Buffer.concat(parts), { status: response.statusCode ?? 0, headers: answerHeaders }));
      });
    });
    let answered = false;
    request.on('response', () => {
      answered = true;
    });
    request.on('error', (error) => {
      if (!answered) setTimeout(() => (answered ? undefined : reject(error)), 1_000);
    });
    const writeNext = (index: number) => {
      if (index === chunks.length) return void request.end();
      if (request.write(chunks[index]!)) setImmediate(() => writeNext(index + 1));
      else request.once('drain', () => writeNext(index + 1));
    };
    writeNext(0);
  });
}
