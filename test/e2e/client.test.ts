import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { BIOMETRIC_CONSENT_STATEMENT } from '@vip/shared-schema';
import {
  authorizationTokenOf,
  createGateClient,
  createOriginClient,
  type GateClient,
  isApproved,
  isBlocked,
  isNoRegistryRecord,
  type PreSynthesisCheckResult,
  ProblemError,
  verifyWebhook,
  WebhookVerificationError,
} from '@vip/shared-schema/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver } from '../support/receiver.js';
import { eventually, type RunningService, startService } from '../support/service.js';
import { ENROLL_CLIPS } from '../support/speech.js';

const admin = { email: 'admin@client-e2e.example', password: 'client-e2e-admin-password' };
const owner = { email: 'owner@client-e2e.example', password: 'client-e2e-owner-password' };

describe('the typed client against the running service', () => {
  let service: RunningService;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let gate: GateClient;
  let ownerOrigin: ReturnType<typeof createOriginClient>;
  let apiKey: string;
  let voiceId: string;
  let webhookSecret: string;
  const platformName = `Client E2E ${randomUUID().slice(0, 8)}`;

  const check = (intended_use: 'audiobook' | 'podcast' = 'audiobook', voice_id = voiceId) =>
    gate.preSynthesisCheck({ voice_id, platform_name: platformName, intended_use });
  /** The gate until `accept` holds; a 401 while the new key travels to the edge counts as not yet. */
  const checkUntil = async (accept: (result: PreSynthesisCheckResult) => boolean, voice_id = voiceId) => {
    let last: PreSynthesisCheckResult | undefined;
    await eventually(async () => {
      try {
        last = await check('audiobook', voice_id);
        return accept(last);
      } catch (error) {
        if (error instanceof ProblemError && error.status === 401) return false;
        throw error;
      }
    }, 10_000);
    return last!;
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    service = await startService({ env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password, WEBHOOK_ALLOW_LOOPBACK: 'true' } });

    const anonymous = createOriginClient({ baseUrl: service.originUrl });
    const adminLogin = await anonymous.auth.login(admin);
    const asAdmin = createOriginClient({ baseUrl: service.originUrl, bearerToken: adminLogin.access_token });
    const platform = await asAdmin.platforms.create({ name: platformName });
    apiKey = (await asAdmin.platforms.createApiKey(platform.platform_id)).api_key;
    gate = createGateClient({ baseUrl: service.edgeUrl, apiKey });

    await anonymous.auth.register(owner);
    const ownerLogin = await anonymous.auth.login(owner);
    ownerOrigin = createOriginClient({ baseUrl: service.originUrl, bearerToken: () => ownerLogin.access_token });
    webhookSecret = (await ownerOrigin.webhooks.register({ url: receiver.url, events: ['enrollment.complete', 'license.revoked'] })).secret;

    const consent = await ownerOrigin.biometricConsent.grant({
      type: 'biometric',
      statement_version: BIOMETRIC_CONSENT_STATEMENT.version,
      accepted: true,
    });
    const audio = await Promise.all(
      ENROLL_CLIPS.map(async (path) => new File([await readFile(path)], path.split('/').at(-1)!, { type: 'audio/ogg' })),
    );
    voiceId = (await ownerOrigin.voices.enroll({ name: 'Client E2E Voice', consent_id: consent.consent_id, audio })).voice_id;
  }, 240_000);

  afterAll(async () => {
    await service?.stop();
    await new Promise((done) => receiver?.server.close(done));
  });

  it('answers no_registry_record for a voice nobody enrolled', async () => {
    const result = await checkUntil(() => true, randomUUID());
    expect(isNoRegistryRecord(result)).toBe(true);
    expect(result).toMatchObject({ voice_id: null, platform_decision_required: true });
  });

  it('answers blocked with no_consent for a freshly enrolled voice', async () => {
    const result = await checkUntil(isBlocked);
    expect(result).toMatchObject({ status: 'blocked', reason: 'no_consent', voice_id: voiceId, authorization_denied: true });
  });

  it('approves once consent and a licence are in place; the token redeems once, then ProblemError 409', async () => {
    await ownerOrigin.synthesisConsent.set(voiceId, 'active');
    const licence = await ownerOrigin.licenses.create(voiceId, {
      platform_name: platformName,
      scopes: ['audiobook'],
      description: 'Narration of audiobook chapters for the tests',
      expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    });
    const approved = await checkUntil(isApproved);
    const token = authorizationTokenOf(approved);
    expect(token).toBeTruthy();

    const claims = await gate.redeemAuthorization(token!);
    expect(claims).toMatchObject({
      voice_id: voiceId,
      platform_name: platformName,
      intended_use: 'audiobook',
      check_id: approved.check_id,
    });

    const again = await gate.redeemAuthorization(token!).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(ProblemError);
    expect(again).toMatchObject({ status: 409, code: 'token_already_used', title: 'Authorization token already used' });
    expect((again as ProblemError).requestId).toMatch(/.{8,}/);

    const scope = await check('podcast');
    expect(isBlocked(scope) && scope.reason).toBe('scope_mismatch');

    // The platform reads its own decision back from the audit log with the same API key.
    const audit = createOriginClient({ baseUrl: service.originUrl, apiKey });
    await eventually(async () => (await audit.audit.list({ check_id: approved.check_id })).entries.length === 1, 10_000);
    expect((await audit.audit.list({ check_id: approved.check_id })).entries[0]).toMatchObject({ decision: 'allow', action: 'authorized' });

    await ownerOrigin.licenses.revoke(voiceId, licence.license_id);
  });

  it('surfaces a wrong API key as ProblemError 401 invalid_credentials', async () => {
    const stranger = createGateClient({ baseUrl: service.edgeUrl, apiKey: 'vip_not-a-real-key' });
    await expect(
      stranger.preSynthesisCheck({ voice_id: randomUUID(), platform_name: platformName, intended_use: 'music' }),
    ).rejects.toMatchObject({ name: 'ProblemError', status: 401, code: 'invalid_credentials' });
  });

  it('verifies real deliveries with the registered secret, and refuses a tampered one', async () => {
    const delivery = async (event: string) => {
      await eventually(async () => receiver.received.some((r) => r.body.includes(`"event":"${event}"`)), 20_000);
      return receiver.received.find((r) => r.body.includes(`"event":"${event}"`))!;
    };
    for (const event of ['enrollment.complete', 'license.revoked'] as const) {
      const { headers, body } = await delivery(event);
      expect(headers['service-event']).toBe(headers['webhook-signature']);
      const verified = await verifyWebhook(webhookSecret, headers, body);
      expect(verified.payload).toMatchObject({ event, voice_id: voiceId });
      expect(verified.id).toBe(headers['webhook-id']);

      const tampered = verifyWebhook(webhookSecret, headers, body.replace(voiceId, randomUUID()));
      await expect(tampered).rejects.toBeInstanceOf(WebhookVerificationError);
    }
  });
});
