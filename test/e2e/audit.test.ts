import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
