import { randomUUID } from 'node:crypto';
import { createOriginClient, ProblemError } from '@vip/shared-schema/client';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { speakerRecordings } from '../../origin/src/testing/voiceprint.js';
import {
  consentedAndLicensed,
  enrolledVoice,
  eventually,
  issuePlatformKey,
  json,
  post,
  type RunningService,
  registeredOwner,
  startService,
} from '../support/service.js';

const admin = { email: 'admin@receipt-e2e.example', password: 'receipt-e2e-admin-password' };
const owner = { email: 'owner@receipt-e2e.example', password: 'receipt-e2e-owner-password' };

/**
 * INTEGRATION §13 right after redemption: the gate decided, the origin has not collected the
 * decision yet. The collector pulls once the edge answers and then sleeps ten minutes, so every
 * check decided after that stays at the edge for the whole test.
 */
describe('a receipt asked for before the origin collected the decision', () => {
  let service: RunningService;
  let ownerToken: string;
  let voiceId: string;
  const keys: Record<string, string> = {};
  const platformName = `Receipt E2E ${randomUUID().slice(0, 8)}`;
  const otherPlatform = `Receipt E2E other ${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    service = await startService({
      env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password, AUDIT_COLLECT_INTERVAL_MS: '600000' },
    });
    // Its first pull found nothing (no check was decided yet): it sleeps from here on.
    await eventually(async () => service.output().includes('audit collector reached the edge'), 60_000);
    for (const name of [platformName, otherPlatform]) keys[name] = await issuePlatformKey(service.originUrl, admin, name);
    ownerToken = await registeredOwner(service.originUrl, owner);
    voiceId = await enrolledVoice(service.originUrl, ownerToken, 'Receipt E2E Voice', speakerRecordings('so762:SPEAKER9612', 0, 8));
    await consentedAndLicensed(service.originUrl, ownerToken, voiceId, platformName);
  }, 240_000);

  afterAll(async () => {
    await service?.stop();
  });

  it('answers 503 receipt_pending with Retry-After to the platform and the owner, 404 to another platform as to a check never made, and the client waits within its bound', async () => {
    const asPlatform = { 'x-api-key': keys[platformName]! };
    const gate = () =>
      post(
        `${service.edgeUrl}${edgeRoutes.preSynthesisCheck.path}`,
        { voice_id: voiceId, platform_name: platformName, intended_use: 'audiobook' },
        asPlatform,
      );
    await eventually(async () => (await json(await gate())).status === 'approved', 20_000);
    const approved = await json(await gate());
    const checkId = approved.check_id as string;
    const redeemed = await post(`${service.edgeUrl}${edgeRoutes.redeem.path}`, { token: approved.authorization_token }, asPlatform);
    expect(redeemed.status).toBe(200);

    const receipt = (id: string, headers: Record<string, string>) =>
      fetch(`${service.originUrl}/api/v1/protect/audit-log/${id}/receipt`, { headers });
    for (const headers of [asPlatform, { authorization: `Bearer ${ownerToken}` }]) {
      const pending = await receipt(checkId, headers);
      expect(pending.status).toBe(503);
      expect(pending.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(pending.headers.get('retry-after')).toBe('1');
      expect(await pending.json()).toMatchObject({ code: 'receipt_pending', detail: expect.stringMatching(/has not collected it yet/) });
    }
    // Whether another platform's check exists is not told: its 404 is the one of a check never made.
    const neverMade = await receipt(randomUUID(), asPlatform);
    const othersCheck = await receipt(checkId, { 'x-api-key': keys[otherPlatform]! });
    expect([neverMade.status, othersCheck.status]).toEqual([404, 404]);
    const { request_id: _a, instance: _b, ...notFound } = (await neverMade.json()) as Record<string, unknown>;
    const { request_id: _c, instance: _d, ...notYours } = (await othersCheck.json()) as Record<string, unknown>;
    expect(notYours).toEqual(notFound);
    expect(notFound.code).toBe('not_found');

    // The typed client: at once without waitMs; asked to wait, it asks again after each Retry-After, and stops at its bound.
    const platform = createOriginClient({ baseUrl: service.originUrl, apiKey: keys[platformName]! });
    await expect(platform.audit.receipt(checkId)).rejects.toMatchObject({ code: 'receipt_pending', retryAfter: 1 });
    const waits: number[] = [];
    const started = performance.now();
    const waited = await platform.audit
      .receipt(checkId, { waitMs: 2_500, onPending: (seconds) => waits.push(seconds) })
      .catch((error) => error);
    expect(waited).toBeInstanceOf(ProblemError);
    expect((waited as ProblemError).code).toBe('receipt_pending');
    expect(waits.length).toBeGreaterThan(0);
    expect(new Set(waits)).toEqual(new Set([1]));
    expect(performance.now() - started).toBeLessThan(2_500 + 1_000);
  }, 120_000);
});
