import { pathOf } from '@vip/shared-schema';
import { compareVoicesRoute } from '@vip/shared-schema/routes/origin/detection';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atStartOfRateWindow, bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { platformKey } from '../testing/platforms.js';
import { expectProblem } from '../testing/problem.js';
import { audioForm, silentWav, speakerRecordings, startTestEngine } from '../testing/voiceprint.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';

/**
 * Each comparison answers a raw cosine, an LLR and a probability: unlimited, a platform could use it
 * as a scoring oracle. It is limited per key (or per user) like screening, before the upload is read.
 */
const COMPARE_PER_MINUTE = 2;

let engine: VoiceprintEngine;
let origin: TestOrigin;
beforeAll(async () => {
  engine = await startTestEngine({ threads: 2 });
  origin = await startTestOrigin({
    voiceprint: engine,
    protection: {
      screeningPerMinute: 60,
      comparePerMinute: COMPARE_PER_MINUTE,
      licenseRequestsPerMinute: 10,
      licensingUrl: 'http://localhost/licensing',
    },
  });
});
afterAll(async () => {
  await origin?.close();
  await engine?.close();
});

const [first, second] = speakerRecordings('so762:SPEAKER9622', 0, 2);
const speech = { audio1: first!, audio2: second! };
/** Refused after admission (no speech), so cheap: what it shows is that the limit let it through. */
const silence = { audio1: silentWav(1), audio2: silentWav(1) };
const compare = (headers: Record<string, string>, files: Record<string, Uint8Array> = speech) =>
  origin.app.inject({ method: 'POST', url: pathOf(compareVoicesRoute), headers, payload: audioForm(files) });

function expectRateLimit(response: LightMyRequestResponse, remaining: number) {
  expect(response.headers['ratelimit-policy']).toBe(`"default";q=${COMPARE_PER_MINUTE};w=60`);
  expect(response.headers.ratelimit).toMatch(new RegExp(`^"default";r=${remaining};t=\\d+$`));
}

describe('POST /api/v1/detection/compare: the limit per credential', () => {
  it('admits the limit per key with RateLimit headers, then 429 with Retry-After, while another key and a user go on', async () => {
    const platform = { 'x-api-key': (await platformKey(origin, 'Compare')).apiKey };
    const other = { 'x-api-key': (await platformKey(origin, 'Compare')).apiKey };
    const owner = bearer((await loggedIn(origin)).accessToken);

    atStartOfRateWindow(origin);
    for (let call = 1; call <= COMPARE_PER_MINUTE; call++) {
      const admitted = await compare(platform);
      expect(admitted.statusCode, admitted.body).toBe(200);
      expectRateLimit(admitted, COMPARE_PER_MINUTE - call);
    }
    const limited = await compare(platform);
    expectProblem(limited, 429, 'rate_limited');
    expectRateLimit(limited, 0);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    for (const admitted of [await compare(other, silence), await compare(owner, silence)]) {
      expectProblem(admitted, 422, 'no_speech');
      expectRateLimit(admitted, COMPARE_PER_MINUTE - 1);
    }
    origin.runtime.advance(retryAfter * 1000);
    expectProblem(await compare(platform, silence), 422, 'no_speech');
  }, 120_000);
});
