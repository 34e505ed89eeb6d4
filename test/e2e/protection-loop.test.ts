import { randomUUID } from 'node:crypto';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { speakerRecordings } from '../../origin/src/testing/voiceprint.js';
import { startWebhookReceiver } from '../support/receiver.js';
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

const admin = { email: 'admin@loop-e2e.example', password: 'loop-e2e-admin-password' };
const owner = { email: 'owner@loop-e2e.example', password: 'loop-e2e-owner-password' };
const ENROLLED_SPEAKER = 'so762:SPEAKER9612';
const STRANGER = 'dsp20:16307130260';

describe('the protection loop across both planes: screen, check, request, approve, synthesize', () => {
  let service: RunningService;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let ownerToken: string;
  let apiKey: string;
  let voiceId: string;
  const platformName = `Loop E2E ${randomUUID().slice(0, 8)}`;
  const asOwner = () => ({ authorization: `Bearer ${ownerToken}` });
  const asPlatform = () => ({ 'x-api-key': apiKey });

  const screen = async (audio: Uint8Array) => {
    const form = new FormData();
    form.set('platform_name', platformName);
    form.set('audio', new Blob([audio], { type: 'audio/ogg' }), 'sample.opus');
    const response = await fetch(`${service.originUrl}/api/v1/protect/screen`, { method: 'POST', headers: asPlatform(), body: form });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await json(response)) as { check_id: string; matches: { voice_id: string; confidence: number; license_url: string }[] };
  };
  const gate = async (voice = voiceId) => {
    const response = await post(
      `${service.edgeUrl}${edgeRoutes.preSynthesisCheck.path}`,
      { voice_id: voice, platform_name: platformName, intended_use: 'audiobook' },
      asPlatform(),
    );
    return { status: response.status, body: await json(response) };
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // A deployment designed for a handful of voices (DESIGN_REGISTRY_SIZE): at the default 100,000 the
    // screening point misses most single short recordings of an enrolled speaker (the model card).
    service = await startService({
      env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password, WEBHOOK_ALLOW_LOOPBACK: 'true', DESIGN_REGISTRY_SIZE: '10' },
    });
    apiKey = await issuePlatformKey(service.originUrl, admin, platformName);
    ownerToken = await registeredOwner(service.originUrl, owner);
    voiceId = await enrolledVoice(service.originUrl, ownerToken, 'Loop E2E Voice', speakerRecordings(ENROLLED_SPEAKER, 0, 8));
    const consented = await fetch(`${service.originUrl}/api/v1/voices/${voiceId}/consent`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...asOwner() },
      body: JSON.stringify({ status: 'active' }),
    });
    expect(consented.status).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await service?.stop();
    receiver?.server.close();
  });

  it('closes the loop from a voice sample to a redeemed authorization', async () => {
    // 1. The platform's key registers its webhook for licence grants.
    const hook = await post(
      `${service.originUrl}/api/v1/webhooks/register`,
      { url: receiver.url, events: ['license.granted'] },
      asPlatform(),
    );
    expect(hook.status, await hook.clone().text()).toBe(201);
    const webhookSecret = (await json(hook)).secret as string;

    // 2. Screening another recording of the enrolled speaker names the voice; a stranger names none.
    const [probe] = speakerRecordings(ENROLLED_SPEAKER, 8, 1);
    const found = await screen(probe!);
    expect(found.matches[0]?.voice_id, JSON.stringify(found)).toBe(voiceId);
    expect(found.matches[0]!.license_url).toContain(`voice_id=${voiceId}`);
    const [stranger] = speakerRecordings(STRANGER, 0, 1);
    expect((await screen(stranger!)).matches).toEqual([]);

    // 3. The gate blocks the named voice: no licence.
    await eventually(async () => (await gate()).body.reason === 'no_license', 10_000);
    expect((await gate()).body).toMatchObject({ status: 'blocked', reason: 'no_license', voice_id: voiceId });

    // 4. The platform asks for a licence; the owner sees the request and approves it.
    const asked = await post(
      `${service.originUrl}/api/v1/voices/${voiceId}/license-requests`,
      {
        platform_name: platformName,
        scopes: ['audiobook'],
        description: 'Narration of audiobook chapters for the tests',
        expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
        message: 'Audiobook narration',
      },
      asPlatform(),
    );
    expect(asked.status, await asked.clone().text()).toBe(201);
    const requestId = (await json(asked)).request_id as string;
    const listed = await json(await fetch(`${service.originUrl}/api/v1/voices/${voiceId}/license-requests`, { headers: asOwner() }));
    expect((listed.requests as { request_id: string; status: string }[]).map((each) => [each.request_id, each.status])).toEqual([
      [requestId, 'pending'],
    ]);
    const approved = await post(`${service.originUrl}/api/v1/voices/${voiceId}/license-requests/${requestId}/approve`, {}, asOwner());
    expect(approved.status, await approved.clone().text()).toBe(200);
    const licenseId = (await json(approved)).license_id as string;

    // 5. The platform's webhook receives license.granted, signed: verified with the standardwebhooks package.
    await eventually(async () => receiver.received.some((each) => each.body.includes('"license.granted"')), 20_000);
    const delivery = receiver.received.find((each) => each.body.includes('"license.granted"'))!;
    const granted = new Webhook(webhookSecret).verify(delivery.body, delivery.headers as Record<string, string>) as Record<string, unknown>;
    expect(granted).toMatchObject({
      event: 'license.granted',
      voice_id: voiceId,
      license_id: licenseId,
      request_id: requestId,
      scopes: ['audiobook'],
    });
    expect(granted.license_token).toMatch(/^vlt_/);
    const read = await json(await fetch(`${service.originUrl}/api/v1/license-requests/${requestId}`, { headers: asPlatform() }));
    expect(read).toMatchObject({ status: 'approved', license_id: licenseId });

    // 6. The gate now approves, and its authorization token redeems once.
    await eventually(async () => (await gate()).body.status === 'approved', 10_000);
    const answer = (await gate()).body;
    expect(answer).toMatchObject({ status: 'approved', licensed: true, voice_id: voiceId });
    const redeemed = await post(`${service.edgeUrl}${edgeRoutes.redeem.path}`, { token: answer.authorization_token }, asPlatform());
    expect(redeemed.status).toBe(200);
    expect(await json(redeemed)).toMatchObject({ voice_id: voiceId, platform_name: platformName, intended_use: 'audiobook' });
  }, 120_000);
});
