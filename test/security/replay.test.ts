import { INTERNAL_SYNC_PATH, sha256Hex, signInternalRequest } from '@vip/shared-schema';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventually, json, post } from '../support/service.js';
import { type Actor, expectProblem, GATE_PATH, type Platform, REDEEM_PATH, type Receiver, Security, startReceiver } from './support.js';

/**
 * Threat: replay. Single-use authorization tokens redeemed again, by another platform, or after
 * they expired; webhook deliveries replayed or tampered with, as a receiver using the
 * `standardwebhooks` package sees them; origin-to-edge sync messages replayed with an old version,
 * an old timestamp or a changed body.
 */

const TOKEN_TTL_SECONDS = 10;

describe('replay', () => {
  let s: Security;
  let owner: Actor;
  let p1: Platform;
  let p2: Platform;
  let voiceId: string;
  let licence: { licenseId: string; token: string };
  let receiver: Receiver;
  let internalSecret: string;
  /** Obtained first, redeemed last, after it expired. */
  let ageingToken: { token: string; expiresAt: number };

  const redeem = (token: string, apiKey: string) => s.send('redeem', 'POST', `${s.edge}${REDEEM_PATH}`, { token }, { 'x-api-key': apiKey });
  const sync = async (body: unknown, nowSeconds = Date.now() / 1000, tamper?: (raw: string) => string) => {
    const raw = JSON.stringify(body);
    const headers = await signInternalRequest(internalSecret, 'POST', INTERNAL_SYNC_PATH, raw, nowSeconds);
    return fetch(`${s.edge}${INTERNAL_SYNC_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: tamper ? tamper(raw) : raw,
    });
  };

  beforeAll(async () => {
    s = await Security.start('replay', {
      AUTHORIZATION_TOKEN_TTL_SECONDS: String(TOKEN_TTL_SECONDS),
      WEBHOOK_ALLOW_LOOPBACK: 'true',
    });
    internalSecret = (await s.secrets()).internal_secret;
    receiver = await startReceiver();
    owner = await s.owner('replay-owner');
    [p1, p2] = [await s.platform('Replay Platform One'), await s.platform('Replay Platform Two')];
    voiceId = await s.enroll(owner, 'Replay Voice');
    await s.setSynthesisConsent(owner, voiceId, 'active');
    licence = await s.license(owner, voiceId, p1.name);
    await s.keyLive(p1.apiKey, p1.name);
    await s.keyLive(p2.apiKey, p2.name);
    const approved = await s.approval(p1.apiKey, voiceId, p1.name);
    ageingToken = { token: approved.authorization_token as string, expiresAt: Date.parse(approved.expires_at as string) };
  }, 240_000);

  afterAll(async () => {
    vi.useRealTimers();
    await receiver?.close();
    await s?.stop();
  });

  it('redeems a token once; every replay answers 409 token_already_used', async () => {
    const { authorization_token: token } = await s.approval(p1.apiKey, voiceId, p1.name);
    expect((await redeem(token as string, p1.apiKey)).status).toBe(200);
    for (let replay = 0; replay < 3; replay += 1) {
      await expectProblem(await redeem(token as string, p1.apiKey), 409, 'token_already_used');
    }
  });

  it('lets exactly one of ten concurrent redemptions through', async () => {
    const { authorization_token: token } = await s.approval(p1.apiKey, voiceId, p1.name);
    const answers = await Promise.all(Array.from({ length: 10 }, () => redeem(token as string, p1.apiKey)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const refused of answers.filter((a) => a.status !== 200)) await expectProblem(refused, 409, 'token_already_used');
  });

  it("refuses another platform's token with 403, and the refusal does not spend it", async () => {
    const { authorization_token: token } = await s.approval(p1.apiKey, voiceId, p1.name);
    await expectProblem(await redeem(token as string, p2.apiKey), 403, 'platform_mismatch');
    expect((await redeem(token as string, p1.apiKey)).status).toBe(200);
    await expectProblem(await redeem(token as string, p2.apiKey), 403, 'platform_mismatch');
  });

  it('refuses a token whose signature or claims were altered', async () => {
    const { authorization_token: token } = await s.approval(p1.apiKey, voiceId, p1.name);
    const [header, payload, signature] = (token as string).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const altered = [
      `${header}.${Buffer.from(JSON.stringify({ ...claims, exp: (claims.exp as number) + 3600 })).toString('base64url')}.${signature}`,
      `${header}.${Buffer.from(JSON.stringify({ ...claims, jti: crypto.randomUUID() })).toString('base64url')}.${signature}`,
      // One character in the middle of the signature changed (the last ones often encode zero bits).
      `${header}.${payload}.${signature.slice(0, 20)}${signature[20] === 'A' ? 'B' : 'A'}${signature.slice(21)}`,
      `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${payload}.`,
    ];
    for (const forged of altered) await expectProblem(await redeem(forged, p1.apiKey), [401, 422], ['invalid_token', 'validation_failed']);
    // The genuine token was untouched by all that.
    expect((await redeem(token as string, p1.apiKey)).status).toBe(200);
  });

  it('rejects a replayed or tampered webhook delivery in a standardwebhooks receiver', async () => {
    const hook = await post(
      `${s.origin}/api/v1/webhooks/register`,
      { url: `${receiver.url}/hook`, events: ['license.revoked'] },
      owner.auth,
    );
    const { webhook_id: webhookId, secret } = (await json(hook)) as { webhook_id: string; secret: string };
    expect((await json(await post(`${s.origin}/api/v1/webhooks/${webhookId}/test`, {}, owner.auth))).delivered).toBe(true);
    const delivery = receiver.requests.at(-1)!;
    const headers = {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers['webhook-signature']),
    };
    const receiverSide = new Webhook(secret);
    // The control: the delivery as sent verifies.
    expect(receiverSide.verify(delivery.body, headers)).toMatchObject({ event: 'webhook.test' });
    expect(delivery.headers['service-event']).toBe(headers['webhook-signature']);

    const replays: { name: string; body: string; headers: Record<string, string>; at?: number }[] = [
      { name: 'tampered body', body: delivery.body.replace('webhook.test', 'license.revoked'), headers },
      { name: 'extra whitespace', body: `${delivery.body} `, headers },
      { name: 'another webhook-id', body: delivery.body, headers: { ...headers, 'webhook-id': 'msg_replayed' } },
      {
        name: 're-dated timestamp',
        body: delivery.body,
        headers: { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 60) },
      },
      {
        name: 'signature of another secret',
        body: delivery.body,
        headers: { ...headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` },
      },
      { name: 'no signature', body: delivery.body, headers: { ...headers, 'webhook-signature': '' } },
      { name: 'replayed six minutes later', body: delivery.body, headers, at: Date.now() + 6 * 60_000 },
      { name: 'replayed a day later', body: delivery.body, headers, at: Date.now() + 86_400_000 },
      { name: 'sent from the future', body: delivery.body, headers, at: Date.now() - 6 * 60_000 },
    ];
    for (const replay of replays) {
      if (replay.at) vi.setSystemTime(replay.at);
      try {
        expect(() => receiverSide.verify(replay.body, replay.headers), replay.name).toThrow();
      } finally {
        vi.useRealTimers();
      }
    }
    // After a rotation the old secret still verifies (grace period), and a stranger's secret never does.
    const rotated = await json(await post(`${s.origin}/api/v1/webhooks/${webhookId}/rotate-secret`, {}, owner.auth));
    expect((await json(await post(`${s.origin}/api/v1/webhooks/${webhookId}/test`, {}, owner.auth))).delivered).toBe(true);
    const next = receiver.requests.at(-1)!;
    const nextHeaders = {
      'webhook-id': String(next.headers['webhook-id']),
      'webhook-timestamp': String(next.headers['webhook-timestamp']),
      'webhook-signature': String(next.headers['webhook-signature']),
    };
    expect(nextHeaders['webhook-id']).not.toBe(headers['webhook-id']);
    expect(new Webhook(rotated.secret as string).verify(next.body, nextHeaders)).toBeTruthy();
    expect(receiverSide.verify(next.body, nextHeaders)).toBeTruthy();
    expect(() => new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(next.body, nextHeaders)).toThrow();
  });

  it('ignores an index update replayed with an old version: a revoked key stays revoked', async () => {
    const key = await s.apiKey(p2.platformId);
    await s.keyLive(key.apiKey, p2.name);
    const revoked = await fetch(`${s.origin}/api/v1/platforms/${p2.platformId}/api-keys/${key.keyId}`, {
      method: 'DELETE',
      headers: s.admin.auth,
    });
    expect(revoked.status).toBe(200);
    const gate = () =>
      post(`${s.edge}${GATE_PATH}`, { voice_id: voiceId, platform_name: p2.name, intended_use: 'audiobook' }, { 'x-api-key': key.apiKey });
    await eventually(async () => (await gate()).status === 401, 5000);
    const resurrect = {
      updates: [
        {
          kind: 'api_key',
          key_hash: await sha256Hex(key.apiKey),
          version: 1,
          record: { key_id: key.keyId, platform_id: p2.platformId, platform_name: p2.name, revoked: false },
        },
      ],
    };
    const ack = await sync(resurrect);
    expect(ack.status).toBe(200);
    expect(await json(ack)).toEqual({ applied: 0, stale: 1 });
    // The same message replayed again changes nothing either.
    expect(await json(await sync(resurrect))).toEqual({ applied: 0, stale: 1 });
    await new Promise((r) => setTimeout(r, 500));
    await expectProblem(await gate(), 401, 'invalid_credentials');
  });

  it('ignores a voice record replayed with an old version: a withdrawn consent stays withdrawn', async () => {
    await s.setSynthesisConsent(owner, voiceId, 'withdrawn');
    await eventually(
      async () =>
        (await json(await s.gate(p1.apiKey, { voice_id: voiceId, platform_name: p1.name, intended_use: 'audiobook' }))).reason ===
        'no_consent',
      5000,
    );
    const grant = {
      updates: [
        {
          kind: 'voice',
          voice_id: voiceId,
          version: 2,
          record: {
            voice_id: voiceId,
            owner_id: owner.userId,
            consent_status: 'active',
            licenses: [
              {
                license_id: licence.licenseId,
                platform_name: p1.name,
                scopes: ['audiobook'],
                expires_at: new Date(Date.now() + 86_400_000).toISOString(),
                status: 'active',
                token_hash: await sha256Hex(licence.token),
              },
            ],
          },
        },
      ],
    };
    expect(await json(await sync(grant))).toEqual({ applied: 0, stale: 1 });
    await new Promise((r) => setTimeout(r, 1100));
    const answer = await json(await s.gate(p1.apiKey, { voice_id: voiceId, platform_name: p1.name, intended_use: 'audiobook' }));
    expect(answer).toMatchObject({ status: 'blocked', reason: 'no_consent' });
  });

  it('refuses sync messages signed outside the time window, re-dated, or with a changed body', async () => {
    const message = { updates: [{ kind: 'voice', voice_id: crypto.randomUUID(), version: 1, record: null }] };
    const refusals = [
      { name: 'signed 6 minutes ago', send: () => sync(message, Date.now() / 1000 - 360) },
      { name: 'signed 6 minutes ahead', send: () => sync(message, Date.now() / 1000 + 360) },
      { name: 'body changed after signing', send: () => sync(message, undefined, (raw) => raw.replace('"version":1', '"version":999999')) },
      {
        name: 'timestamp header re-dated',
        send: async () => {
          const raw = JSON.stringify(message);
          const headers = await signInternalRequest(internalSecret, 'POST', INTERNAL_SYNC_PATH, raw, Date.now() / 1000 - 360);
          return fetch(`${s.edge}${INTERNAL_SYNC_PATH}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers, 'x-vip-timestamp': String(Math.floor(Date.now() / 1000)) },
            body: raw,
          });
        },
      },
      {
        name: 'signed with another secret',
        send: async () => {
          const raw = JSON.stringify(message);
          const headers = await signInternalRequest('another-secret-of-enough-length', 'POST', INTERNAL_SYNC_PATH, raw, Date.now() / 1000);
          return fetch(`${s.edge}${INTERNAL_SYNC_PATH}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body: raw,
          });
        },
      },
      {
        name: 'a sync signature replayed on the audit pull route',
        send: async () => {
          const raw = JSON.stringify({ ack: [], limit: 10 });
          const headers = await signInternalRequest(internalSecret, 'POST', INTERNAL_SYNC_PATH, raw, Date.now() / 1000);
          return fetch(`${s.edge}/internal/v1/audit-pull`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body: raw,
          });
        },
      },
    ];
    for (const refusal of refusals) {
      try {
        await expectProblem(await refusal.send(), 401, 'invalid_signature');
      } catch (error) {
        throw new Error(`${refusal.name}: ${(error as Error).message}`);
      }
    }
    // The control: the same message, signed now, is accepted.
    expect((await sync(message)).status).toBe(200);
  });

  it(
    'refuses an expired token with 410 token_expired',
    async () => {
      const wait = ageingToken.expiresAt + 1000 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await expectProblem(await redeem(ageingToken.token, p1.apiKey), 410, 'token_expired');
    },
    (TOKEN_TTL_SECONDS + 5) * 1000,
  );
});
