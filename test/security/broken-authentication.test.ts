import { createHmac, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { type CryptoKey, importJWK, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, json, post } from '../support/service.js';
import { type Actor, expectProblem, GATE_PATH, type Platform, Security } from './support.js';

/**
 * Threat: broken authentication (OWASP API2). Forged access tokens on both planes, refresh-token
 * reuse, revoked and malformed API keys at the edge, and login brute force.
 */

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('broken authentication', () => {
  let s: Security;
  let owner: Actor;
  let platform: Platform;
  let realKey: CryptoKey;
  let realKid: string;
  let publicX: string;

  const now = () => Math.floor(Date.now() / 1000);
  const claims = (overrides: Partial<JWTPayload> & Record<string, unknown> = {}): JWTPayload => ({
    sub: owner.userId,
    role: 'owner',
    iss: 'urn:vip:origin',
    aud: 'urn:vip:api',
    iat: now() - 5,
    exp: now() + 600,
    jti: randomUUID(),
    ...overrides,
  });
  const sign = (payload: JWTPayload, key: CryptoKey | KeyObject = realKey, header: Record<string, unknown> = {}) =>
    new SignJWT(payload).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: realKid, ...header }).sign(key);

  beforeAll(async () => {
    s = await Security.start('authn', { AUTHORIZATION_TOKEN_TTL_SECONDS: '60' });
    owner = await s.owner('authn-owner');
    platform = await s.platform('Authn Platform');
    const { jwt_private_jwk: jwk } = await s.secrets();
    realKid = jwk.kid!;
    publicX = jwk.x!;
    realKey = (await importJWK({ ...jwk, alg: 'EdDSA' }, 'EdDSA')) as CryptoKey;
    await s.keyLive(platform.apiKey, platform.name);
  }, 180_000);

  afterAll(async () => {
    await s?.stop();
  });

  const onOrigin = (token: string) => fetch(`${s.origin}/api/v1/voices`, { headers: { authorization: `Bearer ${token}` } });
  const onEdge = (token: string) =>
    post(
      `${s.edge}${GATE_PATH}`,
      { voice_id: randomUUID(), platform_name: platform.name, intended_use: 'audiobook' },
      { authorization: `Bearer ${token}` },
    );

  it('accepts a token the test signs correctly with the real key (the forger works), on both planes', async () => {
    expect((await onOrigin(await sign(claims()))).status).toBe(200);
    // Only an administrator's token may ask the gate in a platform's name, so the edge control is an admin's.
    const admin = await sign(claims({ sub: s.admin.userId, role: 'admin' }));
    expect((await onOrigin(admin)).status).toBe(200);
    expect((await onEdge(admin)).status).toBe(200);
  });

  /** Each forgery is built from the real key material where the attack needs it. */
  const forgeries: { name: string; make: () => Promise<string> }[] = [
    { name: 'alg none, no signature', make: async () => `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims())}.` },
    { name: 'alg none with the real kid', make: async () => `${b64({ alg: 'none', typ: 'at+jwt', kid: realKid })}.${b64(claims())}.` },
    {
      name: 'signed by another Ed25519 key under the real kid',
      make: async () => sign(claims(), generateKeyPairSync('ed25519').privateKey),
    },
    {
      name: 'signed by another key under an unknown kid',
      make: async () => sign(claims(), generateKeyPairSync('ed25519').privateKey, { kid: 'attacker-key' }),
    },
    { name: 'expired', make: async () => sign(claims({ iat: now() - 3600, exp: now() - 1800 })) },
    { name: 'wrong audience', make: async () => sign(claims({ aud: 'urn:vip:other' })) },
    { name: 'wrong issuer', make: async () => sign(claims({ iss: 'urn:vip:edge' })) },
    {
      name: 'wrong typ (an authorization token is not an access token)',
      make: async () => sign(claims(), realKey, { typ: 'vip-authz+jwt' }),
    },
    { name: 'missing sub', make: async () => sign(claims({ sub: undefined })) },
    { name: 'role outside the enum', make: async () => sign(claims({ role: 'superuser' })) },
    {
      name: 'HS256 keyed with the public key (x)',
      make: async () => {
        const unsigned = `${b64({ alg: 'HS256', typ: 'at+jwt', kid: realKid })}.${b64(claims({ role: 'admin' }))}`;
        return `${unsigned}.${createHmac('sha256', publicX).update(unsigned).digest('base64url')}`;
      },
    },
    {
      name: 'HS256 keyed with the public JWK JSON',
      make: async () => {
        const unsigned = `${b64({ alg: 'HS256', typ: 'at+jwt', kid: realKid })}.${b64(claims({ role: 'admin' }))}`;
        const publicJwk = JSON.stringify({ crv: 'Ed25519', kty: 'OKP', x: publicX });
        return `${unsigned}.${createHmac('sha256', publicJwk).update(unsigned).digest('base64url')}`;
      },
    },
    {
      name: 'tampered payload (owner made admin, signature kept)',
      make: async () => {
        const [header, , signature] = owner.accessToken.split('.');
        const payload = JSON.parse(Buffer.from(owner.accessToken.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
        return `${header}.${b64({ ...payload, role: 'admin' })}.${signature}`;
      },
    },
    {
      name: 'tampered payload (another user id, signature kept)',
      make: async () => {
        const [header, payload, signature] = s.admin.accessToken.split('.');
        const claimsOf = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
        return `${header}.${b64({ ...claimsOf, sub: owner.userId })}.${signature}`;
      },
    },
    { name: 'signature stripped', make: async () => `${owner.accessToken.split('.').slice(0, 2).join('.')}.` },
    { name: 'two segments only', make: async () => owner.accessToken.split('.').slice(0, 2).join('.') },
    { name: 'garbage', make: async () => 'not-a-jwt' },
    { name: 'a refresh token as access token', make: async () => owner.refreshToken },
  ];

  it('refuses every forged access token on the origin (401 problem+json)', async () => {
    for (const forgery of forgeries) {
      const token = await forgery.make();
      const response = await onOrigin(token);
      try {
        await expectProblem(response, 401, ['invalid_token', 'authentication_required']);
      } catch (error) {
        throw new Error(`${forgery.name}: ${(error as Error).message}`);
      }
    }
  });

  it('refuses every forged access token at the edge (401 problem+json)', async () => {
    for (const forgery of forgeries) {
      const token = await forgery.make();
      const response = await onEdge(token);
      try {
        await expectProblem(response, 401, ['invalid_token', 'authentication_required']);
      } catch (error) {
        throw new Error(`${forgery.name}: ${(error as Error).message}`);
      }
    }
  });

  it('refuses an admin route to a forged admin token (forgery cannot escalate)', async () => {
    for (const forgery of forgeries.filter((f) => f.name.includes('admin') || f.name.startsWith('HS256'))) {
      const response = await fetch(`${s.origin}/api/v1/platforms`, { headers: { authorization: `Bearer ${await forgery.make()}` } });
      await expectProblem(response, 401);
    }
  });

  const malformedHeaders: { name: string; headers: Record<string, string> }[] = [
    { name: 'Bearer without a token', headers: { authorization: 'Bearer' } },
    { name: 'Basic credentials', headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } },
    { name: 'token without scheme', headers: { authorization: 'eyJhbGciOiJub25lIn0.e30.' } },
    { name: 'empty X-API-Key', headers: { 'x-api-key': '' } },
    { name: 'API key without the vip_ prefix', headers: { 'x-api-key': 'abc123' } },
    { name: 'unknown vip_ key', headers: { 'x-api-key': `vip_${'A'.repeat(43)}` } },
    { name: 'oversized vip_ key', headers: { 'x-api-key': `vip_${'A'.repeat(5000)}` } },
  ];

  it('refuses malformed credentials on the gate and on the origin', async () => {
    for (const { name, headers } of malformedHeaders) {
      const edge = await post(
        `${s.edge}${GATE_PATH}`,
        { voice_id: randomUUID(), platform_name: platform.name, intended_use: 'audiobook' },
        headers,
      );
      const origin = await fetch(`${s.origin}/api/v1/protect/audit-log`, { headers });
      try {
        await expectProblem(edge, 401);
        await expectProblem(origin, 401);
      } catch (error) {
        throw new Error(`${name}: ${(error as Error).message}`);
      }
    }
  });

  it('revokes the whole family when a spent refresh token is presented again', async () => {
    const first = owner.refreshToken;
    const rotated = await post(`${s.origin}/api/v1/auth/refresh`, { refresh_token: first });
    expect(rotated.status).toBe(200);
    const second = (await json(rotated)).refresh_token as string;
    expect(second).not.toBe(first);
    await expectProblem(await post(`${s.origin}/api/v1/auth/refresh`, { refresh_token: first }), 401, 'refresh_token_reused');
    // The thief's reuse killed the legitimate holder's newer token too.
    await expectProblem(await post(`${s.origin}/api/v1/auth/refresh`, { refresh_token: second }), 401, [
      'invalid_token',
      'refresh_token_reused',
    ]);
    for (const bogus of ['', 'x', `${second}x`, second.toUpperCase()]) {
      await expectProblem(await post(`${s.origin}/api/v1/auth/refresh`, { refresh_token: bogus }), [401, 422]);
    }
  });

  it('refuses a revoked API key at the edge and at the origin', async () => {
    const key = await s.apiKey(platform.platformId);
    await s.keyLive(key.apiKey, platform.name);
    const revoked = await fetch(`${s.origin}/api/v1/platforms/${platform.platformId}/api-keys/${key.keyId}`, {
      method: 'DELETE',
      headers: s.admin.auth,
    });
    expect(revoked.status).toBe(200);
    const gate = () =>
      post(
        `${s.edge}${GATE_PATH}`,
        { voice_id: randomUUID(), platform_name: platform.name, intended_use: 'audiobook' },
        { 'x-api-key': key.apiKey },
      );
    await eventually(async () => (await gate()).status === 401, 5000);
    await expectProblem(await gate(), 401, 'invalid_credentials');
    await expectProblem(
      await post(`${s.edge}/api/v1/protect/authorizations/redeem`, { token: 'x.y.z' }, { 'x-api-key': key.apiKey }),
      401,
      'invalid_credentials',
    );
    await expectProblem(await fetch(`${s.origin}/api/v1/protect/audit-log`, { headers: { 'x-api-key': key.apiKey } }), 401);
    // The platform's other key is untouched.
    expect(
      (
        await post(
          `${s.edge}${GATE_PATH}`,
          { voice_id: randomUUID(), platform_name: platform.name, intended_use: 'audiobook' },
          { 'x-api-key': platform.apiKey },
        )
      ).status,
    ).toBe(200);
  });

  it('limits password guessing per account: 429 with Retry-After, even for the right password', async () => {
    const victim = await s.owner('brute-victim');
    const guesses = Array.from({ length: 10 }, (_, i) => `wrong-guess-number-${i}`);
    for (const password of guesses) {
      await expectProblem(await post(`${s.origin}/api/v1/auth/login`, { email: victim.email, password }), 401, 'invalid_credentials');
    }
    const locked = await post(`${s.origin}/api/v1/auth/login`, { email: victim.email, password: victim.password });
    await expectProblem(locked, 429, 'rate_limited');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    // An unknown account is answered like a known one (no enumeration through the error).
    const unknown = await post(`${s.origin}/api/v1/auth/login`, { email: 'nobody@owners.example', password: 'wrong-guess-number-x' });
    await expectProblem(unknown, 401, 'invalid_credentials');
  });
});
