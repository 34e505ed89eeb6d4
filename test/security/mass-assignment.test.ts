import { readFile } from 'node:fs/promises';
import { BIOMETRIC_CONSENT_STATEMENT } from '@vip/shared-schema';
import { platformSigner } from '@vip/shared-schema/testing/provenance-files';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post } from '../support/service.js';
import { EDGE_CONTRACTS, ORIGIN_CONTRACTS } from './route-scopes.js';
import { type Actor, expectProblem, type Platform, type Receiver, Security, SPEAKERS, startReceiver } from './support.js';

/**
 * Threat: mass assignment (OWASP API3/API6). Every route that takes a body gets a valid body plus a
 * field the caller must not set; each must be refused with 422 problem+json, and nothing written.
 */

/** Fields an attacker would like to set, with values that would matter if they stuck. */
const EXTRA_FIELDS: [string, unknown][] = [
  ['owner_id', '00000000-0000-4000-8000-000000000001'],
  ['role', 'admin'],
  ['consent_status', 'active'],
  ['id', '00000000-0000-4000-8000-000000000002'],
  ['created_at', '2000-01-01T00:00:00.000Z'],
  ['status', 'approved'],
  ['user_id', '00000000-0000-4000-8000-000000000003'],
  ['is_admin', true],
  // A licence's terms are stated, never marked as migrated or given a hash by the caller.
  ['description_source', 'from_scopes'],
  ['license_terms_sha256', '0'.repeat(64)],
];
/** The prototype-pollution spelling, sent as raw JSON (it cannot be built as an object literal). */
const PROTO_FIELD = '"__proto__":{"role":"admin","is_admin":true}';

interface JsonCase {
  url: () => string;
  method?: string;
  headers: () => Record<string, string>;
  body: () => Record<string, unknown>;
}

describe('mass assignment: extra fields are refused and nothing is written', () => {
  let s: Security;
  let owner: Actor;
  let platform: Platform;
  let voiceId: string;
  let licenceId: string;
  let requestId: string;
  let receiver: Receiver;
  const newEmail = 'mass-assigned@owners.example';
  const in90Days = new Date(Date.now() + 90 * 86_400_000).toISOString();

  beforeAll(async () => {
    s = await Security.start('mass', { WEBHOOK_ALLOW_LOOPBACK: 'true' });
    receiver = await startReceiver();
    owner = await s.owner('mass-owner');
    platform = await s.platform('Mass Platform');
    voiceId = await s.enroll(owner, 'Mass Voice');
    licenceId = (await s.license(owner, voiceId, platform.name)).licenseId;
    await s.keyLive(platform.apiKey, platform.name);
    const asked = await s.send(
      'requestLicense',
      'POST',
      `${s.origin}/api/v1/voices/${voiceId}/license-requests`,
      {
        platform_name: platform.name,
        scopes: ['podcast'],
        description: 'Narration of audiobook chapters for the tests',
        expires_at: in90Days,
      },
      { 'x-api-key': platform.apiKey },
    );
    expect(asked.status).toBe(201);
    requestId = (await json(asked)).request_id as string;
  }, 240_000);

  afterAll(async () => {
    await receiver?.close();
    await s?.stop();
  });

  /** A CA the platform could register: the extra field, not the certificate, is what must be refused. */
  const signingCa = platformSigner('Mass Platform').caPem;
  const audioForm = async () => {
    const form = new FormData();
    form.set('audio', new Blob([await readFile(SPEAKERS.a[0]!)], { type: 'audio/ogg' }), 'file.opus');
    return form;
  };

  const jsonCases: Record<string, JsonCase> = {
    register: {
      url: () => `${s.origin}/api/v1/auth/register`,
      headers: () => ({}),
      body: () => ({ email: newEmail, password: 'mass-assigned-password' }),
    },
    login: {
      url: () => `${s.origin}/api/v1/auth/login`,
      headers: () => ({}),
      body: () => ({ email: owner.email, password: owner.password }),
    },
    refresh: { url: () => `${s.origin}/api/v1/auth/refresh`, headers: () => ({}), body: () => ({ refresh_token: owner.refreshToken }) },
    logout: { url: () => `${s.origin}/api/v1/auth/logout`, headers: () => ({}), body: () => ({ refresh_token: owner.refreshToken }) },
    changePassword: {
      url: () => `${s.origin}/api/v1/auth/password`,
      headers: () => owner.auth,
      body: () => ({ current_password: owner.password, new_password: 'a mass-assigned new password' }),
    },
    createPlatform: {
      url: () => `${s.origin}/api/v1/platforms`,
      headers: () => s.admin.auth,
      body: () => ({ name: 'Mass Assigned Platform' }),
    },
    createApiKey: {
      url: () => `${s.origin}/api/v1/platforms/${platform.platformId}/api-keys`,
      headers: () => s.admin.auth,
      body: () => ({}),
    },
    grantConsent: {
      url: () => `${s.origin}/api/v1/consents`,
      headers: () => owner.auth,
      body: () => ({ type: 'biometric', statement_version: BIOMETRIC_CONSENT_STATEMENT.version, accepted: true }),
    },
    setVoiceConsent: {
      url: () => `${s.origin}/api/v1/voices/${voiceId}/consent`,
      method: 'PUT',
      headers: () => owner.auth,
      body: () => ({ status: 'active' }),
    },
    createLicense: {
      url: () => `${s.origin}/api/v1/voices/${voiceId}/licenses`,
      headers: () => owner.auth,
      body: () => ({
        platform_name: platform.name,
        scopes: ['music'],
        description: 'Narration of audiobook chapters for the tests',
        expires_at: in90Days,
      }),
    },
    renewLicense: {
      url: () => `${s.origin}/api/v1/voices/${voiceId}/licenses/${licenceId}/renew`,
      headers: () => owner.auth,
      body: () => ({ expires_at: in90Days }),
    },
    decideVoiceReview: {
      url: () => `${s.origin}/api/v1/admin/voice-reviews/${voiceId}`,
      headers: () => s.admin.auth,
      body: () => ({ decision: 'clear' }),
    },
    registerWebhook: {
      url: () => `${s.origin}/api/v1/webhooks/register`,
      headers: () => owner.auth,
      body: () => ({ url: `${receiver.url}/mass`, events: ['voice.deleted'] }),
    },
    registerSigningCertificate: {
      url: () => `${s.origin}/api/v1/signing-certificates`,
      headers: () => ({ 'x-api-key': platform.apiKey }),
      body: () => ({ certificate_pem: signingCa }),
    },
    requestLicense: {
      url: () => `${s.origin}/api/v1/voices/${voiceId}/license-requests`,
      headers: () => ({ 'x-api-key': platform.apiKey }),
      body: () => ({
        platform_name: platform.name,
        scopes: ['gaming'],
        description: 'Narration of audiobook chapters for the tests',
        expires_at: in90Days,
      }),
    },
    approveLicenseRequest: {
      url: () => `${s.origin}/api/v1/voices/${voiceId}/license-requests/${requestId}/approve`,
      headers: () => owner.auth,
      body: () => ({ expires_at: in90Days }),
    },
    declineLicenseRequest: {
      url: () => `${s.origin}/api/v1/voices/${voiceId}/license-requests/${requestId}/decline`,
      headers: () => owner.auth,
      body: () => ({ reason: 'no' }),
    },
    preSynthesisCheck: {
      url: () => `${s.edge}/api/v1/protect/pre-synthesis-check`,
      headers: () => ({ 'x-api-key': platform.apiKey }),
      body: () => ({ voice_id: voiceId, platform_name: platform.name, intended_use: 'audiobook' }),
    },
    redeemAuthorization: {
      url: () => `${s.edge}/api/v1/protect/authorizations/redeem`,
      headers: () => ({ 'x-api-key': platform.apiKey }),
      body: () => ({ token: 'eyJhbGciOiJFZERTQSJ9.e30.c2ln' }),
    },
  };

  /** `headers`: the caller, when not the owner (screening is a platform's). */
  const multipartCases: Record<string, () => Promise<{ url: string; form: FormData; headers?: Record<string, string> }>> = {
    enrollVoice: async () => ({
      url: `${s.origin}/api/v1/voices/enroll`,
      form: await s.enrollForm('Mass Enrolled', await s.consent(owner), SPEAKERS.b.slice(0, 4)),
    }),
    openVoiceDispute: async () => ({
      url: `${s.origin}/api/v1/voices/disputes`,
      form: await s.enrollForm('Mass Disputed', await s.consent(owner), SPEAKERS.b.slice(0, 4)),
    }),
    reenrollVoice: async () => {
      const form = new FormData();
      for (const [index, file] of SPEAKERS.a.slice(0, 4).entries()) {
        form.append('audio', new Blob([await readFile(file)], { type: 'audio/ogg' }), `take-${index}.opus`);
      }
      return { url: `${s.origin}/api/v1/voices/${voiceId}/re-enroll`, form };
    },
    measureRecordings: async () => {
      const form = new FormData();
      form.append('audio', new Blob([await readFile(SPEAKERS.a[0]!)], { type: 'audio/ogg' }), 'take.opus');
      return { url: `${s.origin}/api/v1/voices/measure`, form };
    },
    compareVoices: async () => {
      const form = new FormData();
      form.set('audio1', new Blob([await readFile(SPEAKERS.a[0]!)], { type: 'audio/ogg' }), 'one.opus');
      form.set('voice_id', voiceId);
      return { url: `${s.origin}/api/v1/detection/compare`, form };
    },
    screenSample: async () => {
      const form = new FormData();
      form.set('audio', new Blob([await readFile(SPEAKERS.a[0]!)], { type: 'audio/ogg' }), 'sample.opus');
      form.set('platform_name', platform.name);
      return { url: `${s.origin}/api/v1/protect/screen`, form, headers: { 'x-api-key': platform.apiKey } };
    },
    verifyProvenance: async () => ({ url: `${s.origin}/api/v1/provenance/verify`, form: await audioForm() }),
    queryByContent: async () => ({ url: `${s.origin}/api/v1/provenance/matches/byContent`, form: await audioForm() }),
    depositManifest: async () => {
      const form = new FormData();
      form.set('manifest', new Blob([new Uint8Array(64)]), 'manifest.c2pa');
      form.set('watermark_id', 'ffffffffff');
      return { url: `${s.origin}/api/v1/provenance/manifests`, form, headers: { 'x-api-key': platform.apiKey } };
    },
  };

  /** A field the route really has (setVoiceConsent's `status`) is not an extra one there. */
  const extrasFor = (c: JsonCase) => EXTRA_FIELDS.filter(([field]) => !(field in c.body()));

  /** What an extra field could have changed. */
  const state = async () => {
    const get = async (path: string, headers: Record<string, string>) => json(await fetch(`${s.origin}${path}`, { headers }));
    return {
      voices: await get('/api/v1/voices', owner.auth),
      licences: await get(`/api/v1/voices/${voiceId}/licenses`, owner.auth),
      webhooks: await get('/api/v1/webhooks', owner.auth),
      platforms: await get('/api/v1/platforms', s.admin.auth),
      keys: await get(`/api/v1/platforms/${platform.platformId}/api-keys`, s.admin.auth),
    };
  };

  it('sends only bodies the contracts accept without the extra field (so the field is what is refused)', () => {
    for (const [operationId, c] of Object.entries(jsonCases)) {
      const contract = [...ORIGIN_CONTRACTS, ...EDGE_CONTRACTS].find((r) => r.operationId === operationId)!;
      expect(contract.body!.safeParse(c.body()).success, operationId).toBe(true);
      for (const [field, value] of extrasFor(c)) expect(contract.body!.safeParse({ ...c.body(), [field]: value }).success).toBe(false);
    }
  });

  it('refuses every extra field on every JSON route with 422 problem+json naming the field', async () => {
    const before = await state();
    for (const [operationId, c] of Object.entries(jsonCases)) {
      for (const [field, value] of extrasFor(c)) {
        const response = await s.send(operationId, c.method ?? 'POST', c.url(), { ...c.body(), [field]: value }, c.headers());
        try {
          const problem = await expectProblem(response, 422, 'validation_failed');
          expect(JSON.stringify(problem.errors ?? [])).toContain(field);
        } catch (error) {
          throw new Error(`${operationId} + ${field}: ${(error as Error).message}`);
        }
      }
      const raw = JSON.stringify(c.body()).replace(/^\{/, `{${PROTO_FIELD},`);
      const proto = await s.call(operationId, c.url(), {
        method: c.method ?? 'POST',
        headers: { 'content-type': 'application/json', ...c.headers() },
        body: raw,
      });
      await expectProblem(proto, 422, ['validation_failed', 'malformed_json']);
    }
    expect(await state()).toEqual(before);
    // Nothing half-done either: the account was not created, the refresh token was not spent,
    // the voice's consent did not move.
    await expectProblem(await post(`${s.origin}/api/v1/auth/login`, { email: newEmail, password: 'mass-assigned-password' }), 401);
    expect((await post(`${s.origin}/api/v1/auth/refresh`, { refresh_token: owner.refreshToken })).status).toBe(200);
    const voices = (before.voices.voices as { voice_id: string; consent_status: string }[]).find((v) => v.voice_id === voiceId);
    expect(voices?.consent_status).toBe('unknown');
  });

  it('refuses every extra field on every multipart route with 422, before any voice is made', async () => {
    const before = await state();
    for (const [operationId, make] of Object.entries(multipartCases)) {
      for (const [field, value] of EXTRA_FIELDS) {
        const { url, form, headers } = await make();
        form.set(field, String(value));
        const response = await s.call(operationId, url, { method: 'POST', headers: headers ?? owner.auth, body: form });
        try {
          const problem = await expectProblem(response, 422, 'validation_failed');
          expect(JSON.stringify(problem.errors ?? [])).toContain(field);
        } catch (error) {
          throw new Error(`${operationId} + ${field}: ${(error as Error).message}`);
        }
      }
    }
    expect(await state()).toEqual(before);
  });
});
