import { limits, pathOf } from '@vip/shared-schema';
import { createSpokenConsentChallengeRoute } from '@vip/shared-schema/routes/origin/spoken-consent';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentChallenges } from '../db/schema.js';
import { atStartOfRateWindow, bearer, loggedIn, startTestOrigin, type TestOrigin, UNHURRIED_JOBS } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import { EXPIRED_CHALLENGE_KEPT_MS } from './service.js';

/**
 * Spoken-consent challenges are rows: unlimited, one owner asked for 300 in 0.9 s and none was ever
 * deleted (issue 31). They are limited per owner, and the background jobs delete expired ones.
 */

let origin: TestOrigin;
beforeAll(async () => {
  origin = await startTestOrigin({ jobs: UNHURRIED_JOBS });
}, 60_000);
afterAll(() => origin?.close());

const ask = (accessToken: string) =>
  origin.app.inject({ method: 'POST', url: pathOf(createSpokenConsentChallengeRoute), headers: bearer(accessToken) });

const challengeRowsOf = async (ownerId: string) =>
  origin.database.db.select().from(consentChallenges).where(eq(consentChallenges.ownerId, ownerId));

function expectRateLimit(response: LightMyRequestResponse, remaining: number) {
  expect(response.headers['ratelimit-policy']).toBe(`"default";q=${limits.consentChallengesPerOwnerPerMinute};w=60`);
  expect(response.headers.ratelimit).toMatch(new RegExp(`^"default";r=${remaining};t=\\d+$`));
}

describe('POST /api/v1/consents/challenges: bounded', { timeout: 120_000 }, () => {
  it('admits the limit per owner with RateLimit headers, then 429 with Retry-After and no row, while another owner goes on', async () => {
    const [owner, other] = [await loggedIn(origin), await loggedIn(origin)];
    atStartOfRateWindow(origin);
    for (let call = 1; call <= limits.consentChallengesPerOwnerPerMinute; call++) {
      const issued = await ask(owner.accessToken);
      expect(issued.statusCode, issued.body).toBe(201);
      expectRateLimit(issued, limits.consentChallengesPerOwnerPerMinute - call);
    }
    const limited = await ask(owner.accessToken);
    expectProblem(limited, 429, 'rate_limited');
    expectRateLimit(limited, 0);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await challengeRowsOf(owner.userId)).toHaveLength(limits.consentChallengesPerOwnerPerMinute);

    expect((await ask(other.accessToken)).statusCode).toBe(201);
    origin.runtime.advance(retryAfter * 1000);
    expect((await ask(owner.accessToken)).statusCode).toBe(201);
  });

  it('deletes challenges in the background once expired for longer than an enrollment in flight may need them', async () => {
    const owner = await loggedIn(origin);
    // Issued by the service itself: the clock moves on past the owner's access token.
    const issue = async () => (await origin.spokenConsent.issueChallenge({ userId: owner.userId, role: 'owner' })).challenge_id;
    const ttlMs = limits.consentChallengeTtlSeconds * 1000;
    const old = await issue();
    origin.runtime.advance(ttlMs + EXPIRED_CHALLENGE_KEPT_MS / 2);
    const recent = await issue();
    origin.runtime.advance(ttlMs);
    const live = await issue();
    // Now `old` expired longer ago than EXPIRED_CHALLENGE_KEPT_MS, `recent` has just expired, `live` has not.
    const ids = async () => (await challengeRowsOf(owner.userId)).map((row) => row.id).sort();
    expect(await ids()).toEqual([old, recent, live].sort());

    origin.jobs!.start();
    await expect.poll(ids, { timeout: 60_000 }).toEqual([recent, live].sort());
  });
});
