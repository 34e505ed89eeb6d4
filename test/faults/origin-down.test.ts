import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, json, type RunningPlanes } from '../support/service.js';
import { ORIGIN_DOWN } from './catalogue.js';
import {
  approvedVoice,
  auditEntries,
  enrollVoice,
  gateCheck,
  missingFromChain,
  type Registry,
  redeem,
  setSynthesisConsent,
  startFaultRegistry,
  verifyChain,
} from './fixtures.js';

const { roundsWhileDown: ROUNDS_WHILE_DOWN } = ORIGIN_DOWN;

describe('the origin goes down: the edge keeps deciding and loses no audit record', () => {
  let service: RunningPlanes;
  /** Set by the test's last line: a failed run keeps its data folder (and planes.log) to read. */
  let passed = false;
  let registry: Registry;
  let approvedId: string;
  let withdrawnId: string;

  beforeAll(async () => {
    ({ service, registry } = await startFaultRegistry('origin-down'));
    approvedId = await approvedVoice(registry, 'Origin Down Approved');
    withdrawnId = await enrollVoice(registry, 'Origin Down Withdrawn');
    // A new voice's consent is unknown, which the gate also answers no_consent: wait for each change
    // to reach the edge, so the withdrawal is not still in the origin's outbox when the origin dies.
    const reason = async () => (await json(await gateCheck(registry, withdrawnId))).reason;
    expect((await setSynthesisConsent(registry, withdrawnId, 'active')).status).toBe(200);
    await eventually(async () => (await reason()) === 'no_license', 10_000);
    expect((await setSynthesisConsent(registry, withdrawnId, 'withdrawn')).status).toBe(200);
    await eventually(async () => (await reason()) === 'no_consent', 10_000);
  }, 120_000);

  afterAll(async () => {
    await service?.stop({ removeData: passed });
  });

  it('answers approved (with redeemable tokens), blocked and no_registry_record without the origin, then chains every record', async () => {
    const originPid = service.origin.pid();
    await service.origin.stop('SIGKILL');
    await expect(fetch(`${service.originUrl}/openapi.json`)).rejects.toThrow();

    const checkIds: string[] = [];
    const refusedJtis: string[] = [];
    const unknownId = randomUUID();
    for (let round = 0; round < ROUNDS_WHILE_DOWN; round++) {
      const approved = await gateCheck(registry, approvedId);
      expect(approved.status).toBe(200);
      const approval = await json(approved);
      expect(approval).toMatchObject({ status: 'approved', voice_id: approvedId });
      checkIds.push(approval.check_id as string);

      const blocked = await json(await gateCheck(registry, withdrawnId));
      expect(blocked).toMatchObject({ status: 'blocked', reason: 'no_consent', voice_id: withdrawnId });
      checkIds.push(blocked.check_id as string);

      const unknown = await json(await gateCheck(registry, unknownId));
      expect(unknown).toMatchObject({ action: 'no_registry_record', voice_id: null });
      checkIds.push(unknown.check_id as string);

      const token = approval.authorization_token as string;
      const redeemed = await redeem(registry, token);
      expect(redeemed.status).toBe(200);
      const redemption = await json(redeemed);
      checkIds.push(redemption.redemption_check_id as string);
      refusedJtis.push(redemption.jti as string);
      const again = await redeem(registry, token);
      expect(again.status).toBe(409);
      expect(await json(again)).toMatchObject({ code: 'token_already_used' });
    }
    expect(new Set(checkIds).size).toBe(ROUNDS_WHILE_DOWN * 4);

    await service.origin.start();
    expect(service.origin.pid()).not.toBe(originPid);

    const lost = await missingFromChain(registry, checkIds, 30_000);
    expect(lost, 'audit records made while the origin was down and never chained').toEqual([]);
    for (const id of checkIds) expect((await auditEntries(registry, id))[0]).toMatchObject({ check_id: id });

    // The refused repeats carry no check_id in their answer: find them by the token they tried to reuse.
    const refusedInChain = async () => {
      const response = await fetch(`${service.originUrl}/api/v1/protect/audit-log?voice_id=${approvedId}&decision=deny&limit=1000`, {
        headers: { authorization: `Bearer ${registry.adminToken}` },
      });
      const { entries } = (await response.json()) as { entries: { token_jti: string; reason: string }[] };
      return entries.filter((entry) => entry.reason === 'token_already_used' && refusedJtis.includes(entry.token_jti)).length;
    };
    await eventually(async () => (await refusedInChain()) === ROUNDS_WHILE_DOWN, 10_000).catch(() => undefined);
    expect(await refusedInChain()).toBe(ROUNDS_WHILE_DOWN);

    expect(await verifyChain(registry)).toMatchObject({ valid: true, first_invalid_seq: null });
    passed = true;
  });
});
