import { randomUUID } from 'node:crypto';
import { createOriginClient, verifyReceipt } from '@vip/shared-schema/client';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { buildGoVerifier, goMissing } from '../../origin/src/testing/go-verifier.js';
import { eventually, json, post, type RunningService, startService } from '../support/service.js';

const admin = { email: 'admin@audit-e2e.example', password: 'audit-e2e-admin-password' };

describe('audit chain across the planes', () => {
  let service: RunningService;
  let adminToken: string;
  let apiKey: string;
  const platformName = `audit-e2e-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    service = await startService({ env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password } });
    adminToken = (await json(await post(`${service.originUrl}/api/v1/auth/login`, admin))).access_token as string;
    const auth = { authorization: `Bearer ${adminToken}` };
    const platform = await json(await post(`${service.originUrl}/api/v1/platforms`, { name: platformName }, auth));
    apiKey = (await json(await post(`${service.originUrl}/api/v1/platforms/${platform.platform_id}/api-keys`, {}, auth))).api_key as string;
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('collects a gate decision from the edge into the verified chain, readable by check_id with the platform key', async () => {
    const gate = `${service.edgeUrl}/api/v1/protect/pre-synthesis-check`;
    const request = { voice_id: randomUUID(), platform_name: platformName, intended_use: 'audiobook' };
    await eventually(async () => (await post(gate, request, { 'x-api-key': apiKey })).status === 200, 5_000);
    const answer = await json(await post(gate, request, { 'x-api-key': apiKey }));
    const checkId = answer.check_id as string;

    const lookup = () => fetch(`${service.originUrl}/api/v1/protect/audit-log?check_id=${checkId}`, { headers: { 'x-api-key': apiKey } });
    await eventually(async () => ((await (await lookup()).json()) as { entries: unknown[] }).entries.length === 1, 10_000);
    const { entries } = (await (await lookup()).json()) as { entries: Record<string, unknown>[] };
    expect(entries[0]).toMatchObject({
      check_id: checkId,
      platform_name: platformName,
      decision: 'unresolved',
      action: 'no_registry_record',
    });

    const verdict = await fetch(`${service.originUrl}/api/v1/protect/audit-log/verify`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(await verdict.json()).toMatchObject({ valid: true, first_invalid_seq: null });
  });

  it('serves a receipt for a gate decision that verifies against the published vkey, with the typed client and with Go', async () => {
    const gate = `${service.edgeUrl}/api/v1/protect/pre-synthesis-check`;
    const request = { voice_id: randomUUID(), platform_name: platformName, intended_use: 'podcast' };
    await eventually(async () => (await post(gate, request, { 'x-api-key': apiKey })).status === 200, 5_000);
    const checkId = (await json(await post(gate, request, { 'x-api-key': apiKey }))).check_id as string;
    const receiptUrl = `${service.originUrl}/api/v1/protect/audit-log/${checkId}/receipt`;
    const fetchReceipt = () => fetch(receiptUrl, { headers: { 'x-api-key': apiKey } });
    // Pending (503 receipt_pending, Retry-After) until collected, chained and covered by a checkpoint.
    await eventually(async () => (await fetchReceipt()).status === 200, 15_000);
    const receipt = await createOriginClient({ baseUrl: service.originUrl, apiKey }).audit.receipt(checkId);
    const vkey = await (await fetch(`${service.originUrl}/tlog/vkey`)).text();
    const verified = await verifyReceipt(receipt, vkey);
    expect(verified.entry).toMatchObject({ check_id: checkId, platform_name: platformName, intended_use: 'podcast' });
    if (goMissing) {
      console.warn(`[e2e audit] Go check of the receipt skipped: ${goMissing}`);
      return;
    }
    const goVerifier = await buildGoVerifier();
    onTestFinished(() => goVerifier.dispose());
    const checked = await goVerifier.run(['-url', service.originUrl, '-vkey', vkey, '-api-key', apiKey, 'receipt', checkId]);
    expect(checked, checked.output).toMatchObject({ ok: true });
    expect((await goVerifier.run(['-url', service.originUrl, '-vkey', vkey, 'checkpoint'])).ok).toBe(true);
  }, 60_000);
});
