import { createOriginClient, verifyReceipt } from '@vip/shared-schema/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, json, type RunningPlanes } from '../support/service.js';
import { GRACEFUL_RESTART } from './catalogue.js';
import { approvedVoice, gateCheck, missingFromChain, type Registry, startFaultRegistry, verifyChain } from './fixtures.js';

const { gateChecks: GATE_CHECKS, stopAfterMs: STOP_AFTER_MS } = GRACEFUL_RESTART;

describe('both planes are stopped right after a burst of gate checks, then started again', () => {
  let service: RunningPlanes;
  /** Set by the test's last line: a failed run keeps its data folder (and planes.log) to read. */
  let passed = false;
  let registry: Registry;
  let voiceId: string;

  beforeAll(async () => {
    ({ service, registry } = await startFaultRegistry('graceful-restart'));
    voiceId = await approvedVoice(registry, 'Graceful Restart Voice');
  }, 120_000);

  afterAll(async () => {
    await service?.stop({ removeData: passed });
  });

  const vkey = async () => (await fetch(`${service.originUrl}/tlog/vkey`)).text();
  /** The receipt of a check once a signed checkpoint covers it, verified offline against `key`. */
  const verifiedReceipt = async (checkId: string, key: string) => {
    const client = createOriginClient({ baseUrl: service.originUrl, apiKey: registry.apiKey });
    let receipt: Awaited<ReturnType<typeof client.audit.receipt>> | undefined;
    await eventually(async () => {
      receipt = await client.audit.receipt(checkId).catch(() => undefined);
      return receipt !== undefined;
    }, 30_000);
    return verifyReceipt(receipt!, key);
  };

  it('loses none of the checks answered before SIGTERM, and receipts from before and after the restart verify with the same key', async () => {
    const answers = await Promise.all(Array.from({ length: GATE_CHECKS }, () => gateCheck(registry, voiceId)));
    const checkIds: string[] = [];
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      const body = await json(answer);
      expect(body.status).toBe('approved');
      checkIds.push(body.check_id as string);
    }
    await new Promise((wait) => setTimeout(wait, STOP_AFTER_MS));
    const keyBefore = await vkey();
    await Promise.all([service.origin.stop('SIGTERM'), service.edge.stop('SIGTERM')]);
    await expect(fetch(`${service.edgeUrl}/openapi.json`)).rejects.toThrow();
    await Promise.all([service.origin.start(), service.edge.start()]);

    const lost = await missingFromChain(registry, checkIds, 30_000);
    expect(lost, 'gate decisions answered before the stop and never chained').toEqual([]);
    expect(await vkey()).toBe(keyBefore);
    const before = await verifiedReceipt(checkIds[0]!, keyBefore);
    expect(before.entry).toMatchObject({ check_id: checkIds[0], voice_id: voiceId });

    const after = await gateCheck(registry, voiceId);
    expect(after.status).toBe(200);
    const afterId = (await json(after)).check_id as string;
    const later = await verifiedReceipt(afterId, keyBefore);
    // One log across the restart: the later entry comes after the earlier one, under the same key.
    expect(later.index).toBeGreaterThan(before.index);
    expect(await verifyChain(registry)).toMatchObject({ valid: true, first_invalid_seq: null });
    passed = true;
  });
});
