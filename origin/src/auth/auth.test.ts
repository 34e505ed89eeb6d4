import { accessToken, limits, loginResponseSchema, PROBLEM_CONTENT_TYPE, pathOf } from '@vip/shared-schema';
import { changePasswordRoute, loginRoute, logoutRoute, refreshRoute, registerRoute } from '@vip/shared-schema/routes/origin/auth';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fastHasher, PASSWORD, startTestOrigin, type TestOrigin, uniqueEmail } from '../testing/origin.js';
import { recordLoginFailure } from './store.js';

let origin: TestOrigin;
const hasher = fastHasher();
beforeAll(async () => {
  origin = await startTestOrigin({ hasher });
});
afterAll(() => origin?.close());

const post = (url: string, payload: unknown, remoteAddress = '198.51.100.7') =>
  origin.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, remoteAddress });

/** Each account from an address of its own: registrations are limited per address (registration-limits.test.ts). */
let registrations = 0;
const registerFromOwnAddress = (payload: unknown) => post(pathOf(registerRoute), payload, `203.0.113.${++registrations % 250}`);

async function register(email = uniqueEmail()) {
  const response = await registerFromOwnAddress({ email, password: PASSWORD });
  expect(response.statusCode).toBe(201);
  return { email, userId: response.json().user_id as string };
}

describe('POST /api/v1/auth/register', () => {
  it('creates an owner account and answers its id and lower-cased email', async () => {
    const email = uniqueEmail('Mixed.Case');
    const response = await registerFromOwnAddress({ email, password: PASSWORD });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({ user_id: expect.stringMatching(/^[0-9a-f-]{36}$/), email: email.toLowerCase() });
  });

  it('refuses an email that is taken, whatever its case, with 409 email_taken', async () => {
    const { email } = await register();
    const response = await registerFromOwnAddress({ email: email.toUpperCase(), password: PASSWORD });
    expect(response.statusCode).toBe(409);
    expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
    expect(response.json().code).toBe('email_taken');
  });

  it('refuses a short password with one field error', async () => {
    const response = await post(pathOf(registerRoute), { email: uniqueEmail(), password: 'short' });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([{ field: 'body.password', message: expect.any(String) }]);
  });
});

describe('POST /api/v1/auth/login', () => {
  it('answers the login result with an EdDSA at+jwt that the JWKS verifies', async () => {
    const { email, userId } = await register();
    const response = await post(pathOf(loginRoute), { email, password: PASSWORD });
    expect(response.statusCode).toBe(200);
    const session = loginResponseSchema.parse(response.json());
    expect(session).toMatchObject({ token_type: 'bearer', user_id: userId, email, expires_in: limits.accessTokenTtlSeconds });
    // A refreshed session names the account too: a client resuming after a reload can say who is signed in.
    const refreshed = await post(pathOf(refreshRoute), { refresh_token: session.refresh_token });
    expect(loginResponseSchema.parse(refreshed.json())).toMatchObject({ user_id: userId, email });

    const jwks = createLocalJWKSet((await origin.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json());
    const { payload, protectedHeader } = await jwtVerify(session.access_token, jwks, {
      issuer: accessToken.issuer,
      audience: accessToken.audience,
      typ: accessToken.type,
    });
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', typ: 'at+jwt', kid: 'test-key' });
    expect(payload).toMatchObject({ sub: userId, role: 'owner', jti: expect.any(String) });
    expect(payload.exp! - payload.iat!).toBe(limits.accessTokenTtlSeconds);
  });

  it('refuses a wrong password with 401 invalid_credentials', async () => {
    const { email } = await register();
    const response = await post(pathOf(loginRoute), { email, password: 'not the password at all' });
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('invalid_credentials');
  });

  it('runs one scrypt verify for an unknown email too, so timing does not reveal accounts', async () => {
    const { email } = await register();
    const verify = vi.spyOn(hasher, 'verify');
    try {
      const unknown = await post(pathOf(loginRoute), { email: uniqueEmail('nobody'), password: PASSWORD });
      const wrong = await post(pathOf(loginRoute), { email, password: 'not the password at all' });
      expect(unknown.statusCode).toBe(401);
      expect(wrong.statusCode).toBe(401);
      expect(unknown.json().code).toBe(wrong.json().code);
      expect(unknown.json().detail).toBe(wrong.json().detail);
      expect(verify).toHaveBeenCalledTimes(2);
      // The unknown email was checked against a real scrypt hash, not skipped.
      expect(verify.mock.calls[0]![1]).toMatch(/^scrypt\$/);
    } finally {
      verify.mockRestore();
    }
  });

  it('answers 429 rate_limited with Retry-After once an account has too many failures, until the window passes', async () => {
    const { email } = await register();
    for (let i = 0; i < limits.loginAttemptsPerAccount; i++) {
      // Different addresses, so only the per-account limit is in play.
      const response = await post(pathOf(loginRoute), { email, password: 'not the password at all' }, `203.0.113.${i + 1}`);
      expect(response.statusCode).toBe(401);
    }
    const limited = await post(pathOf(loginRoute), { email, password: PASSWORD }, '203.0.113.99');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
    expect(limited.json().code).toBe('rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(limits.loginWindowSeconds);

    origin.runtime.advance((retryAfter + 1) * 1000);
    expect((await post(pathOf(loginRoute), { email, password: PASSWORD }, '203.0.113.99')).statusCode).toBe(200);
  });

  it('answers 429 to a client address with too many failures, for any account', async () => {
    const { email } = await register();
    const address = '198.51.100.200';
    const now = origin.runtime.clock.now();
    const failures = Array.from({ length: limits.loginAttemptsPerIp }, () => `ip:${address}`);
    await recordLoginFailure(origin.database.db, failures, now, new Date(now.getTime() - limits.loginWindowSeconds * 1000));
    const limited = await post(pathOf(loginRoute), { email, password: PASSWORD }, address);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect((await post(pathOf(loginRoute), { email, password: PASSWORD }, '198.51.100.201')).statusCode).toBe(200);
  });
});

describe('POST /api/v1/auth/refresh', () => {
  async function login() {
    const { email, userId } = await register();
    const response = await post(pathOf(loginRoute), { email, password: PASSWORD });
    return { userId, session: response.json() as { refresh_token: string; access_token: string } };
  }

  it('rotates: answers a new pair, and the new refresh token works in turn', async () => {
    const { userId, session } = await login();
    const first = await post(pathOf(refreshRoute), { refresh_token: session.refresh_token });
    expect(first.statusCode).toBe(200);
    const rotated = loginResponseSchema.parse(first.json());
    expect(rotated.user_id).toBe(userId);
    expect(rotated.refresh_token).not.toBe(session.refresh_token);
    const second = await post(pathOf(refreshRoute), { refresh_token: rotated.refresh_token });
    expect(second.statusCode).toBe(200);
  });

  it('answers 401 refresh_token_reused to a spent token and revokes its whole family', async () => {
    const { session } = await login();
    const rotated = (await post(pathOf(refreshRoute), { refresh_token: session.refresh_token })).json();
    const reuse = await post(pathOf(refreshRoute), { refresh_token: session.refresh_token });
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json().code).toBe('refresh_token_reused');
    // The token handed out by the legitimate rotation dies with the family.
    const afterRevocation = await post(pathOf(refreshRoute), { refresh_token: rotated.refresh_token });
    expect(afterRevocation.statusCode).toBe(401);
    expect(afterRevocation.json().code).toBe('invalid_token');
  });

  it('leaves the other sessions of the same user alone when one family is revoked', async () => {
    const { email } = await register();
    const [stolen, other] = await Promise.all(
      [1, 2].map(async () => (await post(pathOf(loginRoute), { email, password: PASSWORD })).json() as { refresh_token: string }),
    );
    await post(pathOf(refreshRoute), { refresh_token: stolen!.refresh_token });
    expect((await post(pathOf(refreshRoute), { refresh_token: stolen!.refresh_token })).statusCode).toBe(401);
    expect((await post(pathOf(refreshRoute), { refresh_token: other!.refresh_token })).statusCode).toBe(200);
  });

  it('refuses an unknown token with 401 invalid_token', async () => {
    const response = await post(pathOf(refreshRoute), { refresh_token: 'never-issued' });
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('invalid_token');
  });

  it('refuses an expired token with 401 invalid_token', async () => {
    const { session } = await login();
    origin.runtime.advance((limits.refreshTokenTtlSeconds + 1) * 1000);
    const response = await post(pathOf(refreshRoute), { refresh_token: session.refresh_token });
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('invalid_token');
  });
});

async function signedIn(email?: string) {
  const account = await register(email);
  const session = loginResponseSchema.parse((await post(pathOf(loginRoute), { email: account.email, password: PASSWORD })).json());
  return { ...account, session };
}

describe('POST /api/v1/auth/logout', () => {
  it("revokes the session: its refresh token no longer refreshes, and the account's other sessions stay", async () => {
    const { email, session } = await signedIn();
    const other = loginResponseSchema.parse((await post(pathOf(loginRoute), { email, password: PASSWORD })).json());
    const response = await post(pathOf(logoutRoute), { refresh_token: session.refresh_token });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ signed_out: true });
    const refreshed = await post(pathOf(refreshRoute), { refresh_token: session.refresh_token });
    expect(refreshed.statusCode).toBe(401);
    expect(refreshed.json().code).toBe('invalid_token');
    expect((await post(pathOf(refreshRoute), { refresh_token: other.refresh_token })).statusCode).toBe(200);
  });

  it('answers the same for an unknown or already revoked token, so it reveals nothing', async () => {
    const { session } = await signedIn();
    expect((await post(pathOf(logoutRoute), { refresh_token: session.refresh_token })).statusCode).toBe(200);
    expect((await post(pathOf(logoutRoute), { refresh_token: session.refresh_token })).json()).toEqual({ signed_out: true });
    expect((await post(pathOf(logoutRoute), { refresh_token: 'never-issued' })).json()).toEqual({ signed_out: true });
  });

  it('refuses a missing, oversized or extra field with 422', async () => {
    expect((await post(pathOf(logoutRoute), {})).json().errors).toEqual([{ field: 'body.refresh_token', message: expect.any(String) }]);
    expect((await post(pathOf(logoutRoute), { refresh_token: 'x'.repeat(513) })).statusCode).toBe(422);
    expect((await post(pathOf(logoutRoute), { refresh_token: 'x', access_token: 'y' })).statusCode).toBe(422);
  });
});

describe('POST /api/v1/auth/password', () => {
  const change = (accessToken: string | null, payload: unknown, remoteAddress = '198.51.100.7') =>
    origin.app.inject({
      method: 'POST',
      url: pathOf(changePasswordRoute),
      payload: payload as Record<string, unknown>,
      remoteAddress,
      headers: accessToken ? { authorization: `Bearer ${accessToken}` } : {},
    });
  const NEW_PASSWORD = 'a brand new passphrase';

  it('changes the password, ends every session of the account and returns a new one', async () => {
    const { email, session } = await signedIn();
    const response = await change(session.access_token, { current_password: PASSWORD, new_password: NEW_PASSWORD });
    expect(response.statusCode).toBe(200);
    const next = loginResponseSchema.parse(response.json());
    expect((await post(pathOf(refreshRoute), { refresh_token: session.refresh_token })).statusCode).toBe(401);
    expect((await post(pathOf(refreshRoute), { refresh_token: next.refresh_token })).statusCode).toBe(200);
    expect((await post(pathOf(loginRoute), { email, password: PASSWORD })).statusCode).toBe(401);
    expect((await post(pathOf(loginRoute), { email, password: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it("changes only the caller's own account", async () => {
    const alice = await signedIn();
    const bob = await signedIn();
    expect((await change(bob.session.access_token, { current_password: PASSWORD, new_password: NEW_PASSWORD })).statusCode).toBe(200);
    expect((await post(pathOf(loginRoute), { email: alice.email, password: PASSWORD })).statusCode).toBe(200);
  });

  it('refuses a wrong current password with 401 invalid_credentials, and counts it as a failed login', async () => {
    const { email, session } = await signedIn();
    for (let i = 0; i < limits.loginAttemptsPerAccount; i++) {
      const wrong = await change(
        session.access_token,
        { current_password: 'not the password at all', new_password: NEW_PASSWORD },
        `203.0.114.${i + 1}`,
      );
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json().code).toBe('invalid_credentials');
    }
    const limited = await change(session.access_token, { current_password: PASSWORD, new_password: NEW_PASSWORD }, '203.0.114.99');
    expect(limited.statusCode).toBe(429);
    expect((await post(pathOf(loginRoute), { email, password: PASSWORD }, '203.0.114.99')).statusCode).toBe(429);
  });

  it('refuses a new password outside the policy, naming the field', async () => {
    const { session } = await signedIn();
    const response = await change(session.access_token, { current_password: PASSWORD, new_password: 'short' });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([{ field: 'body.new_password', message: expect.any(String) }]);
  });

  it('needs a valid access token: none is 401 authentication_required, a forged one 401 invalid_token', async () => {
    const body = { current_password: PASSWORD, new_password: NEW_PASSWORD };
    expect((await change(null, body)).json().code).toBe('authentication_required');
    expect((await change('eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', body)).json().code).toBe('invalid_token');
  });
});
