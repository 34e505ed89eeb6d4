import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, json } from '../support/service.js';
import {
  type Actor,
  expectProblem,
  GATE_PATH,
  type Platform,
  REDEEM_PATH,
  type Receiver,
  Security,
  SPEAKERS,
  startReceiver,
} from './support.js';

/**
 * Threat: excessive data exposure (OWASP API3) and secrets in logs. Every kind of request is driven
 * through both planes; then every response (headers and body), every webhook delivery and every line
 * the service printed is scanned for embeddings, audio, passwords and their hashes, keys, tokens,
 * webhook secrets, the internal secret and private JWK material.
 */

/** Eight or more numbers with a fractional part in a row: an embedding, however it is spelled. */
const FLOAT_ARRAY = /\[\s*-?\d*\.\d+(?:e[-+]?\d+)?(?:\s*,\s*-?\d*\.\d+(?:e[-+]?\d+)?){7,}/i;
const SCRYPT_HASH = /scrypt\$ln=/;
/** Ogg's capture pattern, raw, base64 and hex: audio bytes echoed back in any of these forms. */
const AUDIO_MARKERS = ['OggS', 'T2dnUw', '4f676753', 'OpusHead', 'T3B1c0hlYW'];

interface Secret {
  what: string;
  value: string;
  /** Labels of the responses that legitimately carry it (shown once). */
  shownIn: string[];
}

describe('data exposure: no biometric data or secret leaves the service', () => {
  let s: Security;
  let owner: Actor;
  let platform: Platform;
  let receiver: Receiver;
  let voiceId: string;
  const secrets: Secret[] = [];
  const remember = (what: string, value: string, shownIn: string[] = []) => secrets.push({ what, value, shownIn });

  beforeAll(async () => {
    s = await Security.start('exposure', { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1' });
    receiver = await startReceiver();
    owner = await s.owner('exposure-owner');
    remember('admin password', s.admin.password);
    remember('owner password', owner.password);
    remember('admin refresh token', s.admin.refreshToken);
    remember('owner refresh token', owner.refreshToken);
    remember('admin access token', s.admin.accessToken, ['login', 'refresh']);
    remember('owner access token', owner.accessToken, ['login', 'refresh']);
    const stored = await s.secrets();
    remember('internal secret', stored.internal_secret);
    for (const [name, jwk] of Object.entries(stored)) if (typeof jwk === 'object') remember(`${name}.d`, jwk.d!);
    platform = await s.platform('Exposure Platform');
    remember('platform API key', platform.apiKey, ['create api key']);
  }, 180_000);

  afterAll(async () => {
    await receiver?.close();
    await s?.stop();
  });

  it('drives every kind of request through both planes', async () => {
    const asOwner = owner.auth;
    // Sessions.
    const login = await s.send('login', 'POST', `${s.origin}/api/v1/auth/login`, { email: owner.email, password: owner.password });
    const session = await json(login);
    remember('second refresh token', session.refresh_token as string, ['login', 'refresh']);
    const refreshed = await s.send('refresh', 'POST', `${s.origin}/api/v1/auth/refresh`, { refresh_token: session.refresh_token });
    remember('rotated refresh token', (await json(refreshed)).refresh_token as string, ['refresh']);
    // Keys, listed after creation.
    const key = await s.send('create api key', 'POST', `${s.origin}/api/v1/platforms/${platform.platformId}/api-keys`, {}, s.admin.auth);
    remember('second API key', (await json(key)).api_key as string, ['create api key']);
    await s.send('list api keys', 'GET', `${s.origin}/api/v1/platforms/${platform.platformId}/api-keys`, undefined, s.admin.auth);
    await s.send('list platforms', 'GET', `${s.origin}/api/v1/platforms`, undefined, s.admin.auth);
    // Webhooks: a given secret, a generated one, a rotation.
    const givenSecret = `whsec_${Buffer.from('exposure-webhook-secret-32-bytes!').toString('base64')}`;
    remember('given webhook secret', givenSecret, ['register webhook']);
    const hook = await s.send(
      'register webhook',
      'POST',
      `${s.origin}/api/v1/webhooks/register`,
      { url: `${receiver.url}/events`, secret: givenSecret, events: ['enrollment.complete', 'license.revoked', 'voice.deleted'] },
      asOwner,
    );
    expect(hook.status).toBe(201);
    const webhookId = (await json(hook)).webhook_id as string;
    const generated = await s.send(
      'register webhook',
      'POST',
      `${s.origin}/api/v1/webhooks/register`,
      { url: `${receiver.url}/other`, events: ['voice.deleted'] },
      asOwner,
    );
    remember('generated webhook secret', (await json(generated)).secret as string, ['register webhook']);
    const rotated = await s.send('rotate', 'POST', `${s.origin}/api/v1/webhooks/${webhookId}/rotate-secret`, undefined, asOwner);
    remember('rotated webhook secret', (await json(rotated)).secret as string, ['rotate']);
    await s.send('list webhooks', 'GET', `${s.origin}/api/v1/webhooks`, undefined, asOwner);
    expect((await s.send('test webhook', 'POST', `${s.origin}/api/v1/webhooks/${webhookId}/test`, undefined, asOwner)).status).toBe(200);
    // Enrollment, list, comparison both ways.
    voiceId = await s.enroll(owner, 'Exposure Voice');
    await s.send('list voices', 'GET', `${s.origin}/api/v1/voices`, undefined, asOwner);
    const pair = new FormData();
    pair.set('audio1', new Blob([await readFile(SPEAKERS.a[0]!)], { type: 'audio/ogg' }), 'one.opus');
    pair.set('audio2', new Blob([await readFile(SPEAKERS.b[0]!)], { type: 'audio/ogg' }), 'two.opus');
    expect((await s.call('compare', `${s.origin}/api/v1/detection/compare`, { method: 'POST', headers: asOwner, body: pair })).status).toBe(
      200,
    );
    const against = new FormData();
    against.set('audio1', new Blob([await readFile(SPEAKERS.a[1]!)], { type: 'audio/ogg' }), 'one.opus');
    against.set('voice_id', voiceId);
    expect(
      (await s.call('compare', `${s.origin}/api/v1/detection/compare`, { method: 'POST', headers: asOwner, body: against })).status,
    ).toBe(200);
    // Registry, gate, redemption, licensing page.
    await s.setSynthesisConsent(owner, voiceId, 'active');
    const licence = await s.license(owner, voiceId, platform.name);
    remember('licence token', licence.token, ['create licence']);
    await s.send('list licences', 'GET', `${s.origin}/api/v1/voices/${voiceId}/licenses`, undefined, asOwner);
    await s.keyLive(platform.apiKey, platform.name);
    const approved = await s.approval(platform.apiKey, voiceId, platform.name);
    remember('authorization token', approved.authorization_token as string, ['gate']);
    await s.gate(platform.apiKey, { voice_id: voiceId, platform_name: platform.name, intended_use: 'music', license_token: licence.token });
    await s.send('redeem', 'POST', `${s.edge}${REDEEM_PATH}`, { token: approved.authorization_token }, { 'x-api-key': platform.apiKey });
    await s.send(
      'redeem again',
      'POST',
      `${s.edge}${REDEEM_PATH}`,
      { token: approved.authorization_token },
      { 'x-api-key': platform.apiKey },
    );
    await s.call('licensing page', `${s.origin}/licensing?voice_id=${voiceId}`);
    await s.call('demo', `${s.edge}/api/v1/protect/demo/pre-synthesis-check`);
    await s.call('edge jwks', `${s.edge}/.well-known/jwks.json`);
    await s.call('origin jwks', `${s.origin}/.well-known/jwks.json`);
    await s.call('checkpoint keys', `${s.origin}/api/v1/protect/audit-log/checkpoints/keys`);
    await s.call('openapi', `${s.origin}/openapi.json`);
    await s.call('openapi', `${s.edge}/openapi.json`);
    // Audit, as owner, admin and platform.
    await eventually(async () => (await s.auditEntries(owner.auth, `voice_id=${voiceId}`)).length >= 3, 15_000);
    await s.auditEntries(s.admin.auth, '');
    await s.auditEntries({ 'x-api-key': platform.apiKey }, '');
    await s.send('verify', 'GET', `${s.origin}/api/v1/protect/audit-log/verify`, undefined, s.admin.auth);
    // Deliveries of real events (enrollment.complete at least).
    await eventually(async () => receiver.requests.some((r) => r.body.includes('enrollment.complete')), 15_000);
    await s.send('webhook deliveries', 'GET', `${s.origin}/api/v1/webhooks/${webhookId}/deliveries`, undefined, asOwner);
    // Erasure.
    expect((await s.send('delete voice', 'DELETE', `${s.origin}/api/v1/voices/${voiceId}`, undefined, asOwner)).status).toBe(200);
  }, 120_000);

  /** Requests that fail, many of them carrying a secret where it does not belong. */
  const failing = (): { label: string; url: string; init: RequestInit; status: number[] }[] => {
    const jsonInit = (method: string, body: unknown, headers: Record<string, string> = {}) => ({
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const owned = secrets.find((x) => x.what === 'owner password')!.value;
    const apiKey = platform.apiKey;
    return [
      {
        label: 'wrong password',
        url: `${s.origin}/api/v1/auth/login`,
        init: jsonInit('POST', { email: owner.email, password: `${owned}-typo` }),
        status: [401],
      },
      {
        label: 'short password echoed?',
        url: `${s.origin}/api/v1/auth/register`,
        init: jsonInit('POST', { email: 'x@owners.example', password: 'Sh0rt!' }),
        status: [422],
      },
      {
        label: 'password in a malformed body',
        url: `${s.origin}/api/v1/auth/login`,
        init: jsonInit('POST', `{"email":"${owner.email}","password":"${owned}"`),
        status: [422],
      },
      {
        label: 'password as a number field',
        url: `${s.origin}/api/v1/auth/login`,
        init: jsonInit('POST', { email: owned, password: owned }),
        status: [422],
      },
      {
        label: 'refresh token in the wrong field',
        url: `${s.origin}/api/v1/auth/refresh`,
        init: jsonInit('POST', { token: owner.refreshToken }),
        status: [422],
      },
      { label: 'api key in a query to a missing route', url: `${s.origin}/api/v1/nowhere?api_key=${apiKey}`, init: {}, status: [404] },
      { label: 'api key in a query at the edge', url: `${s.edge}/api/v1/nowhere?api_key=${apiKey}`, init: {}, status: [404] },
      {
        label: 'api key as a Bearer token',
        url: `${s.origin}/api/v1/voices`,
        init: { headers: { authorization: `Bearer ${apiKey}` } },
        status: [401],
      },
      {
        label: 'api key as a Bearer token at the edge',
        url: `${s.edge}${GATE_PATH}`,
        init: jsonInit('POST', {}, { authorization: `Bearer ${apiKey}` }),
        status: [401],
      },
      {
        label: 'bad webhook secret',
        url: `${s.origin}/api/v1/webhooks/register`,
        init: jsonInit('POST', { url: `${receiver.url}/x`, secret: `whsec_${owned}`, events: ['voice.deleted'] }, owner.auth),
        status: [422],
      },
      {
        label: 'gate body with a secret in an unknown field',
        url: `${s.edge}${GATE_PATH}`,
        init: jsonInit(
          'POST',
          { voice_id: 'nope', platform_name: platform.name, intended_use: 'audiobook', password: owned },
          { 'x-api-key': apiKey },
        ),
        status: [422],
      },
      {
        label: 'token in redeem body, wrong key',
        url: `${s.edge}${REDEEM_PATH}`,
        init: jsonInit('POST', { token: owner.accessToken }, { 'x-api-key': apiKey }),
        status: [401, 422],
      },
      { label: 'wrong method', url: `${s.origin}/api/v1/voices`, init: { method: 'PATCH', headers: owner.auth }, status: [405] },
      {
        label: 'text/plain body',
        url: `${s.origin}/api/v1/auth/login`,
        init: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: owned },
        status: [415],
      },
      {
        label: 'oversized JSON with a secret',
        url: `${s.origin}/api/v1/auth/login`,
        init: jsonInit('POST', { email: owner.email, password: owned.repeat(5000) }),
        status: [413, 422],
      },
      {
        label: 'missing voice',
        url: `${s.origin}/api/v1/voices/${crypto.randomUUID()}`,
        init: { method: 'DELETE', headers: owner.auth },
        status: [404],
      },
    ];
  };

  it('answers every failure as problem+json without echoing what was sent', async () => {
    for (const { label, url, init, status } of failing()) {
      const response = await s.call(label, url, init);
      try {
        await expectProblem(response, status);
      } catch (error) {
        throw new Error(`${label}: ${(error as Error).message}`);
      }
    }
  });

  it('never shows an embedding, audio, a password hash or a secret in a response', () => {
    expect(s.seen.length).toBeGreaterThan(40);
    for (const seen of s.seen) {
      const text = `${seen.headers}\n${seen.body}`;
      const where = `${seen.label} (${seen.status})`;
      expect(FLOAT_ARRAY.test(text), `${where} carries a float array`).toBe(false);
      expect(SCRYPT_HASH.test(text), `${where} carries a password hash`).toBe(false);
      // The OpenAPI documents name request fields such as `password`; every other body must not.
      if (seen.label !== 'openapi') {
        expect(
          /"(embedding|vector|audio|password(_hash)?|secret_hash|key_hash)"\s*:/.test(seen.body),
          `${where} names a secret field`,
        ).toBe(false);
      }
      for (const marker of AUDIO_MARKERS) expect(text.includes(marker), `${where} carries audio (${marker})`).toBe(false);
      for (const secret of secrets) {
        if (secret.shownIn.includes(seen.label)) continue;
        expect(text.includes(secret.value), `${where} carries the ${secret.what}`).toBe(false);
      }
    }
  });

  it('never sends an embedding or audio in a webhook delivery', () => {
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) {
      const text = `${JSON.stringify(request.headers)}\n${request.body}`;
      expect(FLOAT_ARRAY.test(text)).toBe(false);
      for (const marker of AUDIO_MARKERS) expect(text.includes(marker)).toBe(false);
      for (const secret of secrets) expect(text.includes(secret.value), `delivery carries the ${secret.what}`).toBe(false);
    }
  });

  it('never prints an embedding, audio, a password, its hash, a key, a token or a secret', () => {
    const output = s.service.output();
    expect(output.length).toBeGreaterThan(1000);
    const lines = output.split('\n');
    for (const line of lines) {
      expect(FLOAT_ARRAY.test(line), `log line carries a float array: ${line.slice(0, 200)}`).toBe(false);
      expect(SCRYPT_HASH.test(line), 'log line carries a password hash').toBe(false);
      for (const marker of AUDIO_MARKERS.slice(1))
        expect(line.includes(marker), `log line carries audio: ${line.slice(0, 200)}`).toBe(false);
    }
    for (const secret of secrets) expect(output.includes(secret.value), `the output carries the ${secret.what}`).toBe(false);
  });
});
