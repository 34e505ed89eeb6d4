import fc from 'fast-check';
import { describe, it } from 'vitest';
import {
  batchOf,
  fcSettings,
  orderScenario,
  pinnedClockExpiry,
  pinnedClockFetcher,
  realClockExpiry,
  runBatch,
  runOrderScenario,
  runScenario,
  scenario,
  viaSelf,
} from '../testing/gate-properties.js';

/**
 * docs/CONTRACT.md#states-and-gate-rules as properties on a Variant B deployment (public gate, `approval_token` only): the
 * same reference model and scenarios as gate-properties.test.ts, with anonymous callers (one
 * client address per run) and platform keys. Each run is a batch of 1 to 4 scenarios sent at once.
 * VITE_FC_SEED=<seed> VITE_FC_PATH=<path> replays a failure.
 */
describe('gate outcome rules against the reference model, Variant B', () => {
  it('answers every published state as the model does, over SELF.fetch (anonymous and API key callers)', async () => {
    const scenarios = batchOf(scenario({ callers: ['anonymous', 'api_key'], expiry: realClockExpiry }));
    await fc.assert(
      fc.asyncProperty(scenarios, (batch) => runBatch(batch, (s) => runScenario(s, { variant: 'B', fetch: viaSelf }))),
      fcSettings(50),
    );
  }, 180_000);

  it('answers as the model does with the clock pinned, licences expiring at the very instant included', async () => {
    const pinned = pinnedClockFetcher();
    const scenarios = batchOf(scenario({ callers: ['anonymous', 'api_key'], expiry: pinnedClockExpiry }));
    // Never behind the real clock (see pinnedClockFetcher).
    await fc.assert(
      fc.asyncProperty(scenarios, fc.integer({ min: 0, max: 86_400_000 }), async (batch, ahead) => {
        const nowMs = Date.now() + ahead;
        pinned.clock.nowMs = nowMs;
        await runBatch(batch, (s) => runScenario(s, { variant: 'B', fetch: pinned.fetch, pinnedNowMs: nowMs }));
      }),
      fcSettings(20),
    );
  }, 180_000);

  it('gives the same answer whatever order the licences were published in', async () => {
    await fc.assert(
      fc.asyncProperty(batchOf(orderScenario(['anonymous', 'api_key'])), (batch) =>
        runBatch(batch, (s) => runOrderScenario(s, { variant: 'B', fetch: viaSelf })),
      ),
      fcSettings(5),
    );
  }, 180_000);
});
