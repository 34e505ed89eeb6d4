import { readFile } from 'node:fs/promises';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  enrolledVoice,
  eventually,
  issuePlatformKey,
  json,
  post,
  type RunningService,
  registeredOwner,
  startService,
} from '../support/service.js';
import { ENROLL_CLIPS } from '../support/speech.js';

const admin = { email: 'admin@registry-e2e.example', password: 'registry-e2e-admin-password' };
const owner = { email: 'owner@registry-e2e.example', password: 'registry-e2e-owner-password' };

describe('the registry across both planes: consent and licences decide the gate', () => {
  let service: RunningService;
  let ownerToken: string;
  let apiKey: string;
  let voiceId: string;
  const platformName = 'Registry E2E Platform';
  const in30Days = () => new Date(Date.now() + 30 * 86_400_000).toISOString();

  const asOwner = () => ({ authorization: `Bearer ${ownerToken}` });
  const gate = async (intendedUse = 'audiobook') => {
    const response = await post(
      `${service.edgeUrl}${edgeRoutes.preSynthesisCheck.path}`,
      { voice_id: voiceId, platform_name: platformName, intended_use: intendedUse },
      { 'x-api-key': apiKey },
    );
    expect(response.status).toBe(200);
    return json(response);
  };
  const gateSays = (expected: Record<string, unknown>) => async () => {
    const answer = await gate();
    return Object.entries(expected).every(([field, value]) => answer[field] === value);
  };
  const setSynthesisConsent = async (status: 'active' | 'withdrawn') => {
    const response = await fetch(`${service.originUrl}/api/v1/voices/${voiceId}/consent`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...asOwner() },
      body: JSON.stringify({ status }),
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ voice_id: voiceId, consent_status: status });
  };
  const license = async (scopes: string[]) => {
    const response = await post(
      `${service.originUrl}/api/v1/voices/${voiceId}/licenses`,
      { platform_name: platformName, scopes, description: 'Narration of audiobook chapters for the tests', expires_at: in30Days() },
      asOwner(),
    );
    expect(response.status).toBe(201);
    return (await json(response)) as { license_id: string; license_token: string };
  };

  beforeAll(async () => {
    service = await startService({ env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password } });
    apiKey = await issuePlatformKey(service.originUrl, admin, platformName);
    ownerToken = await registeredOwner(service.originUrl, owner);
    const clips = await Promise.all(ENROLL_CLIPS.map(async (path) => new Uint8Array(await readFile(path))));
    voiceId = await enrolledVoice(service.originUrl, ownerToken, 'Registry E2E Voice', clips);
  }, 240_000);

  afterAll(async () => {
    await service?.stop();
  });

  it('blocks a newly enrolled voice with no_consent, and links the licensing page', async () => {
    await eventually(gateSays({ status: 'blocked', reason: 'no_consent' }), 5000);
    const answer = await gate();
    expect(answer).toMatchObject({ action: 'authorization_denied', authorization_denied: true, voice_id: voiceId });
    const page = await fetch(answer.license_url as string);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('Registry E2E Voice');
  });

  it('walks consent and licences to an approval, a single redemption, and fast blocks after revocation and withdrawal', async () => {
    await setSynthesisConsent('active');
    await eventually(gateSays({ status: 'blocked', reason: 'no_license' }), 5000);

    await license(['music']);
    await eventually(gateSays({ status: 'blocked', reason: 'scope_mismatch' }), 5000);

    const audiobook = await license(['audiobook']);
    await eventually(gateSays({ status: 'approved' }), 5000);
    const approved = await gate();
    expect(approved).toMatchObject({ status: 'approved', consented: true, licensed: true, voice_id: voiceId });
    const token = approved.authorization_token as string;
    expect(token).toBeTruthy();

    const redeemed = await post(`${service.edgeUrl}${edgeRoutes.redeem.path}`, { token }, { 'x-api-key': apiKey });
    expect(redeemed.status).toBe(200);
    expect(await json(redeemed)).toMatchObject({ voice_id: voiceId, platform_name: platformName, intended_use: 'audiobook' });
    const again = await post(`${service.edgeUrl}${edgeRoutes.redeem.path}`, { token }, { 'x-api-key': apiKey });
    expect(again.status).toBe(409);
    expect(await json(again)).toMatchObject({ code: 'token_already_used' });

    const revoked = await post(`${service.originUrl}/api/v1/voices/${voiceId}/licenses/${audiobook.license_id}/revoke`, {}, asOwner());
    expect(await json(revoked)).toEqual({ license_id: audiobook.license_id, status: 'revoked' });
    expect(await eventually(gateSays({ status: 'blocked', reason: 'scope_mismatch' }), 1000)).toBeLessThan(1000);

    await license(['audiobook']);
    await eventually(gateSays({ status: 'approved' }), 5000);
    await setSynthesisConsent('withdrawn');
    expect(await eventually(gateSays({ status: 'blocked', reason: 'no_consent' }), 1000)).toBeLessThan(1000);
  });

  it('voids for good a token issued before a withdrawal or under a revoked licence: a re-grant or a new licence of the same scope does not revive it', async () => {
    const redeem = (token: string) => post(`${service.edgeUrl}${edgeRoutes.redeem.path}`, { token }, { 'x-api-key': apiKey });
    const approvedToken = async () => {
      await eventually(gateSays({ status: 'approved' }), 5000);
      return (await gate()).authorization_token as string;
    };
    const expectRevoked = async (token: string) => {
      const answer = await redeem(token);
      expect(answer.status).toBe(410);
      expect(await json(answer)).toMatchObject({ code: 'token_revoked' });
    };
    const revoke = async (licenseId: string) =>
      expect((await post(`${service.originUrl}/api/v1/voices/${voiceId}/licenses/${licenseId}/revoke`, {}, asOwner())).status).toBe(200);
    // One audiobook licence from here on, so the approval's licence is known.
    const { licenses } = (await json(await fetch(`${service.originUrl}/api/v1/voices/${voiceId}/licenses`, { headers: asOwner() }))) as {
      licenses: { license_id: string; status: string }[];
    };
    for (const { license_id } of licenses.filter((entry) => entry.status === 'active')) await revoke(license_id);
    const first = await license(['audiobook']);

    // Consent: withdrawn after the token was issued, then granted again.
    await setSynthesisConsent('active');
    const beforeWithdrawal = await approvedToken();
    await setSynthesisConsent('withdrawn');
    await eventually(gateSays({ status: 'blocked', reason: 'no_consent' }), 5000);
    await setSynthesisConsent('active');
    const afterRegrant = await approvedToken();
    await new Promise((wait) => setTimeout(wait, 1500));
    await expectRevoked(beforeWithdrawal);

    // Licence: revoked after the token was issued, then replaced by one of the same scope.
    await revoke(first.license_id);
    await eventually(gateSays({ status: 'blocked', reason: 'no_license' }), 5000);
    await license(['audiobook']);
    const underNewLicence = await approvedToken();
    await new Promise((wait) => setTimeout(wait, 1500));
    await expectRevoked(afterRegrant);
    // A token issued after both still redeems: only the stale ones are refused.
    expect((await redeem(underNewLicence)).status).toBe(200);
  });
});
