import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type RunningPlanes } from '../support/service.js';
import { EDGE_RESTART } from './catalogue.js';
import { approvedVoice, gateCheck, missingFromChain, type Registry, redeem, startFaultRegistry, verifyChain } from './fixtures.js';

const { tokensIssued: TOKENS_ISSUED, redeemedBefore: REDEEMED_BEFORE, concurrentRedemptions: CONCURRENT_REDEMPTIONS } = EDGE_RESTART;

describe('the edge crashes and restarts on its persisted state', () => {
  let service: RunningPlanes;
  /** Set by the test's last line: a failed run keeps its data folder (and planes.log) to read. */
  let passed = false;
  let registry: Registry;
  let voiceId: string;

  beforeAll(async () => {
    ({ service, registry } = await startFaultRegistry('edge-restart'));
    voiceId = await approvedVoice(registry, 'Edge Restart Voice');
  }, 120_000);

  afterAll(async () => {
    await service?.stop({ removeData: passed });
  });

  const approval = async () => {
    const response = await gateCheck(registry, voiceId);
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.status).toBe('approved');
    return { token: body.authorization_token as string, checkId: body.check_id as string };
  };

  it('keeps redeemed tokens spent and outstanding ones redeemable exactly once, and loses no audit record', async () => {
    // The collector cannot pull while the origin is frozen: at the crash, the edge's storage is the only copy.
    service.origin.pause();
    const issued = [];
    for (let i = 0; i < TOKENS_ISSUED; i++) issued.push(await approval());
    const checkIds = issued.map((token) => token.checkId);
    for (const { token } of issued.slice(0, REDEEMED_BEFORE)) {
      const redeemed = await redeem(registry, token);
      expect(redeemed.status).toBe(200);
      checkIds.push((await json(redeemed)).redemption_check_id as string);
    }

    await service.edge.stop('SIGKILL');
    await expect(fetch(`${service.edgeUrl}/openapi.json`)).rejects.toThrow();
    await service.edge.start();
    service.origin.resume();

    // Spent before the crash: still spent.
    for (const { token } of issued.slice(0, REDEEMED_BEFORE)) {
      const again = await redeem(registry, token);
      expect(again.status).toBe(409);
      expect(await json(again)).toMatchObject({ code: 'token_already_used' });
    }

    // Outstanding: one at a time, 200 then 409.
    const [sequential, ...raced] = issued.slice(REDEEMED_BEFORE);
    const first = await redeem(registry, sequential!.token);
    expect(first.status).toBe(200);
    checkIds.push((await json(first)).redemption_check_id as string);
    expect((await redeem(registry, sequential!.token)).status).toBe(409);

    // Outstanding, raced: exactly one 200 per token, every other answer 409; the same for a token issued after the restart.
    const issuedAfter = await approval();
    checkIds.push(issuedAfter.checkId);
    for (const { token } of [...raced, issuedAfter]) {
      const answers = await Promise.all(Array.from({ length: CONCURRENT_REDEMPTIONS }, () => redeem(registry, token)));
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([200, ...Array<number>(CONCURRENT_REDEMPTIONS - 1).fill(409)]);
      checkIds.push((await json(answers.find((answer) => answer.status === 200)!)).redemption_check_id as string);
    }

    // Every decision and redemption recorded before and after the crash reaches the chain.
    const lost = await missingFromChain(registry, checkIds, 30_000);
    expect(lost, 'audit records of the edge never chained').toEqual([]);
    expect(await verifyChain(registry)).toMatchObject({ valid: true, first_invalid_seq: null });
    passed = true;
  });
});
