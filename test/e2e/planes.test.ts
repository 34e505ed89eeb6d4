import { randomUUID } from 'node:crypto';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, json, post, type RunningService, startService } from '../support/service.js';

const admin = { email: 'admin@e2e.example', password: 'e2e-admin-password-long-enough' };
const gatePath = edgeRoutes.preSynthesisCheck.path;

describe('both planes started as npm start starts them', () => {
  let service: RunningService;
  let adminToken: string;
  let platformId: string;
  const platformName = `e2e-platform-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    service = await startService({ env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password } });
    const login = await post(`${service.originUrl}/api/v1/auth/login`, admin);
    expect(login.status).toBe(200);
    adminToken = (await json(login)).access_token as string;
    const platform = await post(`${service.originUrl}/api/v1/platforms`, { name: platformName }, { authorization: `Bearer ${adminToken}` });
    expect(platform.status).toBe(201);
    platformId = (await json(platform)).platform_id as string;
  });

  afterAll(async () => {
    await service?.stop();
  });

  const gateRequest = (platform = platformName) => ({ voice_id: randomUUID(), platform_name: platform, intended_use: 'audiobook' });
  const issueKey = async () => {
    const response = await post(
      `${service.originUrl}/api/v1/platforms/${platformId}/api-keys`,
      {},
      { authorization: `Bearer ${adminToken}` },
    );
    expect(response.status).toBe(201);
    return (await json(response)) as { key_id: string; api_key: string };
  };

  it('refuses the gate without a credential, as problem+json', async () => {
    const response = await post(`${service.edgeUrl}${gatePath}`, gateRequest());
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(await json(response)).toMatchObject({ status: 401, code: 'authentication_required' });
  });

  it('accepts a key issued at the origin once the edge index has it, and refuses another platform', async () => {
    const { api_key } = await issueKey();
    await eventually(
      async () => (await post(`${service.edgeUrl}${gatePath}`, gateRequest(), { 'x-api-key': api_key })).status === 200,
      5000,
    );
    const answer = await post(`${service.edgeUrl}${gatePath}`, gateRequest(), { 'x-api-key': api_key });
    expect(await json(answer)).toMatchObject({ action: 'no_registry_record', platform_decision_required: true, voice_id: null });
    const mismatch = await post(`${service.edgeUrl}${gatePath}`, gateRequest('someone-else'), { 'x-api-key': api_key });
    expect(mismatch.status).toBe(403);
    expect(await json(mismatch)).toMatchObject({ code: 'platform_mismatch' });
  });

  it('accepts an origin-issued Bearer token at the edge (JWKS fetched from the origin)', async () => {
    const response = await post(`${service.edgeUrl}${gatePath}`, gateRequest(), { authorization: `Bearer ${adminToken}` });
    expect(response.status).toBe(200);
    const forged = `${adminToken.slice(0, -4)}AAAA`;
    expect((await post(`${service.edgeUrl}${gatePath}`, gateRequest(), { authorization: `Bearer ${forged}` })).status).toBe(401);
  });

  it('refuses a revoked key at the edge within one second', async () => {
    const { key_id, api_key } = await issueKey();
    await eventually(
      async () => (await post(`${service.edgeUrl}${gatePath}`, gateRequest(), { 'x-api-key': api_key })).status === 200,
      5000,
    );
    const revoke = await fetch(`${service.originUrl}/api/v1/platforms/${platformId}/api-keys/${key_id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(await json(revoke)).toEqual({ key_id, revoked: true });
    const elapsed = await eventually(
      async () => (await post(`${service.edgeUrl}${gatePath}`, gateRequest(), { 'x-api-key': api_key })).status === 401,
      1000,
    );
    expect(elapsed).toBeLessThan(1000);
  });

  it('serves OpenAPI 3.1 and a docs page on both planes', async () => {
    for (const url of [service.originUrl, service.edgeUrl]) {
      const document = await json(await fetch(`${url}/openapi.json`));
      expect(document.openapi).toBe('3.1.0');
      const docs = await fetch(`${url}/docs`);
      expect(docs.headers.get('content-type')).toContain('text/html');
    }
  });

  it('never prints the admin password, a key or a token', async () => {
    const { api_key } = await issueKey();
    await post(`${service.edgeUrl}${gatePath}`, gateRequest(), { 'x-api-key': api_key });
    const output = service.output();
    expect(output).not.toContain(admin.password);
    expect(output).not.toContain(api_key);
    expect(output).not.toContain(adminToken);
  });
});

describe('a second start', () => {
  it('stops cleanly on Ctrl-C and reuses the data it persisted', async () => {
    const first = await startService({ env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password } });
    const registered = await post(`${first.originUrl}/api/v1/auth/register`, {
      email: 'owner@e2e.example',
      password: 'owner-password-long-enough',
    });
    expect(registered.status).toBe(201);
    expect(await first.stop()).toBe(0);

    const second = await startService({ dataDir: first.dataDir });
    try {
      expect(second.output()).not.toContain('[start] generated');
      const login = await post(`${second.originUrl}/api/v1/auth/login`, {
        email: 'owner@e2e.example',
        password: 'owner-password-long-enough',
      });
      expect(login.status).toBe(200);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });

  it('generates and prints an admin password once when none is given', async () => {
    const first = await startService({ env: { ADMIN_EMAIL: 'generated@e2e.example' } });
    const printed = /password[^\n]*?:\s*(\S+)/i.exec(
      first
        .output()
        .split('\n')
        .find((line) => /admin/i.test(line) && /password/i.test(line)) ?? '',
    );
    expect(await first.stop()).toBe(0);
    expect(printed?.[1]).toBeTruthy();
    const second = await startService({ dataDir: first.dataDir, env: { ADMIN_EMAIL: 'generated@e2e.example' } });
    try {
      expect(second.output()).not.toContain(printed![1]!);
      const login = await post(`${second.originUrl}/api/v1/auth/login`, { email: 'generated@e2e.example', password: printed![1] });
      expect(login.status).toBe(200);
    } finally {
      await second.stop();
    }
  });
});
