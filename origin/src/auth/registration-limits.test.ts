import { pathOf } from '@vip/shared-schema';
import { loginRoute, registerRoute } from '@vip/shared-schema/routes/origin/auth';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_REGISTRATIONS_PER_MINUTE } from '../config.js';
import { atStartOfRateWindow, fastHasher, PASSWORD, startTestOrigin, type TestOrigin, uniqueEmail } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import type { PasswordHasher } from './passwords.js';
import { REGISTRATION_HASHING } from './service.js';

/**
 * Each registration costs a scrypt hash: unlimited, one address flooding them slowed every login on
 * the replica from 150 ms to 5–6 s (issue 31). They are limited per client address, and hashed
 * through a bounded lane so that a flood from many addresses cannot queue ahead of the logins either.
 */

/** A hasher whose hashes wait while `held`, counting how many run at once; verifies are never held. */
function heldHasher() {
  const inner = fastHasher();
  const waiting: (() => void)[] = [];
  const state = { held: false, running: 0, mostAtOnce: 0 };
  const hasher: PasswordHasher = {
    async hash(password) {
      state.running++;
      state.mostAtOnce = Math.max(state.mostAtOnce, state.running);
      try {
        if (state.held) await new Promise<void>((resolve) => waiting.push(resolve));
        return await inner.hash(password);
      } finally {
        state.running--;
      }
    },
    verify: (password, encoded) => inner.verify(password, encoded),
    dummyHash: () => inner.dummyHash(),
  };
  const release = () => {
    state.held = false;
    for (const resume of waiting.splice(0)) resume();
  };
  return { hasher, state, waiting, release };
}

const held = heldHasher();
let origin: TestOrigin;
beforeAll(async () => {
  origin = await startTestOrigin({ hasher: held.hasher });
});
afterAll(() => origin?.close());

const register = (email: string, remoteAddress: string) =>
  origin.app.inject({ method: 'POST', url: pathOf(registerRoute), payload: { email, password: PASSWORD }, remoteAddress });
const login = (email: string) =>
  origin.app.inject({ method: 'POST', url: pathOf(loginRoute), payload: { email, password: PASSWORD }, remoteAddress: '192.0.2.99' });

function expectRateLimit(response: LightMyRequestResponse, remaining: number) {
  expect(response.headers['ratelimit-policy']).toBe(`"default";q=${DEFAULT_REGISTRATIONS_PER_MINUTE};w=60`);
  expect(response.headers.ratelimit).toMatch(new RegExp(`^"default";r=${remaining};t=\\d+$`));
}

describe('POST /api/v1/auth/register: bounded work', { timeout: 120_000 }, () => {
  it('admits the limit per address with RateLimit headers, then 429 with Retry-After and no account, while another address goes on', async () => {
    const address = '198.51.100.20';
    atStartOfRateWindow(origin);
    for (let call = 1; call <= DEFAULT_REGISTRATIONS_PER_MINUTE; call++) {
      const admitted = await register(uniqueEmail('flood'), address);
      expect(admitted.statusCode, admitted.body).toBe(201);
      expectRateLimit(admitted, DEFAULT_REGISTRATIONS_PER_MINUTE - call);
    }
    const refusedEmail = uniqueEmail('refused');
    const limited = await register(refusedEmail, address);
    expectProblem(limited, 429, 'rate_limited');
    expectRateLimit(limited, 0);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expectProblem(await login(refusedEmail), 401, 'invalid_credentials');

    const elsewhere = await register(uniqueEmail('elsewhere'), '198.51.100.21');
    expect(elsewhere.statusCode).toBe(201);
    expectRateLimit(elsewhere, DEFAULT_REGISTRATIONS_PER_MINUTE - 1);
    origin.runtime.advance(retryAfter * 1000);
    expect((await register(refusedEmail, address)).statusCode).toBe(201);
  });

  it('hashes one registration at a time with a bounded queue: beyond it 503 with Retry-After, and logins never wait in it', async () => {
    const account = uniqueEmail('steady');
    await origin.auth.createUser(account, PASSWORD, 'owner');
    held.state.mostAtOnce = 0;
    held.state.held = true;
    const admitted = REGISTRATION_HASHING.concurrency + REGISTRATION_HASHING.maxWaiting;
    const extra = 5;
    // Every registration from its own address, as a flood from many addresses would come.
    const answers = Array.from({ length: admitted + extra }, (_, index) =>
      register(uniqueEmail('many'), `10.0.${Math.floor(index / 250)}.${index % 250}`),
    );
    const early: number[] = [];
    for (const answer of answers) void answer.then((response) => early.push(response.statusCode));
    // The registrations past the queue are answered at once, while the queue's first hash is held.
    await vi.waitFor(() => expect(early).toHaveLength(extra), { timeout: 60_000, interval: 20 });
    expect(early).toEqual(Array(extra).fill(503));
    expect(held.waiting).toHaveLength(REGISTRATION_HASHING.concurrency);
    const steadyLogin = await login(account);
    expect(steadyLogin.statusCode, steadyLogin.body).toBe(200);

    held.release();
    const statuses = (await Promise.all(answers)).map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(admitted);
    expect(statuses.filter((status) => status === 503)).toHaveLength(extra);
    const busy = (await Promise.all(answers)).find((response) => response.statusCode === 503)!;
    expect(busy.headers['retry-after']).toBe('1');
    expectProblem(busy, 503, 'unavailable');
    expect(held.state.mostAtOnce).toBe(REGISTRATION_HASHING.concurrency);
  });
});
