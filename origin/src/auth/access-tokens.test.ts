import { accessToken, PROBLEM_CONTENT_TYPE, pathOf } from '@vip/shared-schema';
import { listPlatformsRoute } from '@vip/shared-schema/routes/origin/platforms';
import { base64url, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { createAccessTokens, generateSigningJwk } from './access-tokens.js';

let origin: TestOrigin;
let admin: Awaited<ReturnType<typeof loggedIn>>;
beforeAll(async () => {
  origin = await startTestOrigin();
  admin = await loggedIn(origin, 'admin');
});
afterAll(() => origin?.close());

const PROTECTED = pathOf(listPlatformsRoute);
const get = (headers: Record<string, string>) => origin.app.inject({ method: 'GET', url: PROTECTED, headers });

async function expectRefused(token: string, code = 'invalid_token') {
  const response = await get(bearer(token));
  expect(response.statusCode).toBe(401);
  expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
  expect(response.json().code).toBe(code);
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
const adminClaims = () => ({ role: 'admin', sub: admin.userId, jti: crypto.randomUUID() });

/** A token exactly like the origin's, with one thing changed by `tweak`. */
async function forge(
  tweak: (jwt: SignJWT) => SignJWT = (jwt) => jwt,
  key?: Parameters<SignJWT['sign']>[0],
  header?: Record<string, unknown>,
) {
  const jwt = new SignJWT(adminClaims())
    .setProtectedHeader({ alg: 'EdDSA', typ: accessToken.type, kid: 'test-key', ...header } as { alg: string })
    .setIssuer(accessToken.issuer)
    .setAudience(accessToken.audience)
    .setIssuedAt(nowSeconds())
    .setExpirationTime(nowSeconds() + 600);
  return tweak(jwt).sign(key ?? (await importJWK(origin.signingJwk, 'EdDSA')));
}

describe('Bearer access tokens on a protected route', () => {
  it('accepts the genuine token of an admin', async () => {
    expect((await get(bearer(admin.accessToken))).statusCode).toBe(200);
    // The forging helper, untouched, makes a valid token: each refusal below is down to its one change.
    expect((await get(bearer(await forge()))).statusCode).toBe(200);
  });

  it('answers 401 authentication_required without an Authorization header', async () => {
    const response = await get({});
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('authentication_required');
  });

  it('refuses a header that is not a Bearer token', async () => {
    const response = await get({ authorization: `Basic ${btoa('a:b')}` });
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('invalid_token');
  });

  it('refuses alg none', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: accessToken.type }));
    const payload = base64url.encode(
      JSON.stringify({ ...adminClaims(), iss: accessToken.issuer, aud: accessToken.audience, iat: nowSeconds(), exp: nowSeconds() + 600 }),
    );
    await expectRefused(`${header}.${payload}.`);
  });

  it('refuses a token signed by another Ed25519 key with the same kid', async () => {
    const other = await generateSigningJwk('test-key');
    const otherTokens = await createAccessTokens(other);
    await expectRefused(await otherTokens.issue({ userId: admin.userId, role: 'admin' }, new Date(), crypto.randomUUID()));
  });

  it('refuses HS256 signed with the public key bytes (algorithm confusion)', async () => {
    const publicKeyBytes = base64url.decode(origin.signingJwk.x);
    await expectRefused(await forge((jwt) => jwt, publicKeyBytes, { alg: 'HS256' }));
    const publicJwkText = new TextEncoder().encode(JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: origin.signingJwk.x }));
    await expectRefused(await forge((jwt) => jwt, publicJwkText, { alg: 'HS256' }));
  });

  it('refuses an expired token', async () => {
    await expectRefused(await forge((jwt) => jwt.setIssuedAt(nowSeconds() - 3600).setExpirationTime(nowSeconds() - 60)));
  });

  it('refuses a token once its 15 minutes are over', async () => {
    const { accessToken: token } = await loggedIn(origin, 'admin');
    origin.runtime.advance(16 * 60 * 1000);
    try {
      await expectRefused(token);
    } finally {
      origin.runtime.advance(-16 * 60 * 1000);
    }
  });

  it('refuses the wrong audience and the wrong issuer', async () => {
    await expectRefused(await forge((jwt) => jwt.setAudience('urn:someone:else')));
    await expectRefused(await forge((jwt) => jwt.setIssuer('urn:someone:else')));
  });

  it('refuses the wrong typ', async () => {
    await expectRefused(await forge((jwt) => jwt, undefined, { typ: 'JWT' }));
  });

  it('refuses a tampered payload (an owner promoting itself to admin)', async () => {
    const owner = await loggedIn(origin, 'owner');
    const [header, payload, signature] = owner.accessToken.split('.');
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload!)));
    const promoted = base64url.encode(JSON.stringify({ ...claims, role: 'admin' }));
    await expectRefused(`${header}.${promoted}.${signature}`);
  });

  it('refuses claims of the wrong shape even when signed correctly', async () => {
    await expectRefused(await forge((jwt) => jwt.setSubject('not-a-uuid')));
  });

  it('answers 403 forbidden to a valid owner token on an admin route', async () => {
    const owner = await loggedIn(origin, 'owner');
    const response = await get(bearer(owner.accessToken));
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
    expect(response.json().code).toBe('forbidden');
  });
});
