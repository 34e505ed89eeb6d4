import { INTENDED_USES, sha256Hex } from '@vip/shared-schema';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, type MockInstance } from 'vitest';
import { evaluate } from '../src/gate/rules.js';
import { serveOriginJwks } from './testing/edge.js';
import {
  aliasGoneFrom,
  batchOf,
  fcSettings,
  indexRecord,
  newCallerPlatform,
  orderScenario,
  pinnedClockExpiry,
  pinnedClockFetcher,
  realClockExpiry,
  realise,
  referenceOutcome,
  runBatch,
  runOrderScenario,
  runScenario,
  scenario,
  tokenPick,
  viaSelf,
  voiceSpec,
} from './testing/gate-properties.js';

/**
 * docs/CONTRACT.md#states-and-gate-rules as properties, Variant A (credentials required, `authorization_token`): random
 * consent and licence states are published through the signed internal sync route, the gate is
 * called over HTTP, and every answer must be the reference model's (testing/gate-properties.ts).
 * Each run is a batch of 1 to 4 independent scenarios sent at once. A failure prints fast-check's
 * seed and path; VITE_FC_SEED=<seed> VITE_FC_PATH=<path> replays it (VITE_FC_RUNS=<n> for more runs).
 */

let jwksStub: MockInstance;
beforeAll(async () => {
  jwksStub = await serveOriginJwks();
});
afterAll(() => jwksStub.mockRestore());

const DAY = 86_400_000;

describe('gate outcome rules against the reference model, Variant A', () => {
  it('answers every published state as the model does, over SELF.fetch (API key and Bearer callers)', async () => {
    const scenarios = batchOf(scenario({ callers: ['api_key', 'bearer'], expiry: realClockExpiry }));
    await fc.assert(
      fc.asyncProperty(scenarios, (batch) => runBatch(batch, (s) => runScenario(s, { variant: 'A', fetch: viaSelf }))),
      fcSettings(60),
    );
  }, 180_000);

  it('answers as the model does with the clock pinned: licences expiring at the very instant, the alias on the sunset boundary', async () => {
    // A sunset ahead of the real clock (tomorrow, UTC), so the pinned instants around its end stay
    // ahead of it too (see pinnedClockFetcher); the spec's own date is long past and covered above.
    const sunset = new Date(Date.now() + DAY).toISOString().slice(0, 10);
    const goneFrom = aliasGoneFrom(sunset);
    const pinned = pinnedClockFetcher({ APPROVAL_TOKEN_SUNSET: sunset });
    // The boundary's last second (23:59:59.xxx) is where an off-by-a-second sunset would show.
    const instant = fc
      .oneof(
        { arbitrary: fc.constantFrom(-1000, -999, -1, 0, 1), weight: 2 },
        { arbitrary: fc.integer({ min: -1500, max: 1500 }), weight: 2 },
        { arbitrary: fc.integer({ min: -DAY, max: DAY }), weight: 1 },
      )
      .map((offset) => goneFrom + offset);
    const scenarios = batchOf(scenario({ callers: ['api_key'], expiry: pinnedClockExpiry }));
    await fc.assert(
      fc.asyncProperty(scenarios, instant, async (batch, nowMs) => {
        pinned.clock.nowMs = nowMs;
        await runBatch(batch, (s) => runScenario(s, { variant: 'A', fetch: pinned.fetch, pinnedNowMs: nowMs, aliasGoneFromMs: goneFrom }));
      }),
      fcSettings(20),
    );
  }, 180_000);

  it('gives the same answer whatever order the licences were published in', async () => {
    await fc.assert(
      fc.asyncProperty(batchOf(orderScenario(['api_key', 'bearer'])), (batch) =>
        runBatch(batch, (s) => runOrderScenario(s, { variant: 'A', fetch: viaSelf })),
      ),
      fcSettings(6),
    );
  }, 180_000);
});

describe('gate outcome rules against the reference model, without HTTP', () => {
  it('evaluate() agrees with the model on every state, expiry boundaries included', async () => {
    const NOW = Date.parse('2026-11-22T12:00:00Z');
    await fc.assert(
      fc.asyncProperty(
        fc.option(voiceSpec(pinnedClockExpiry), { freq: 8 }),
        tokenPick,
        fc.constantFrom(...INTENDED_USES),
        async (spec, pick, use) => {
          const platform = newCallerPlatform();
          const voice = spec === null ? null : realise(spec, platform, NOW);
          const own = voice?.licences ?? [];
          let token: string | null = null;
          if (pick.kind === 'own' && own.length > 0) token = own[pick.index % own.length]!.token;
          else if (pick.kind === 'garbage') token = pick.text;
          else if (pick.kind !== 'none') token = `lic_${crypto.randomUUID()}`;
          const record = voice === null ? null : await indexRecord(crypto.randomUUID(), voice);
          const hash = token === null ? null : await sha256Hex(token);
          const got = evaluate(record, { platform_name: platform, intended_use: use, license_token_hash: hash }, NOW);
          const want = referenceOutcome(voice, { platform_name: platform, intended_use: use, license_token: token }, NOW);
          if (want.outcome === 'no_registry_record') expect(got).toEqual({ outcome: 'unknown' });
          else if (want.outcome === 'approved')
            expect(got).toEqual({ outcome: 'approved', consent_status: 'active', license_status: 'licensed' });
          else
            expect(got).toEqual({
              outcome: 'blocked',
              reason: want.reason,
              consent_status: want.consent_status,
              license_status: want.license_status,
            });
        },
      ),
      fcSettings(1000),
    );
  });
});
