import { accessToken, accessTokenClaimsSchema, ProblemError } from '@vip/shared-schema';
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';
import type { Caller } from './caller.js';

/**
 * Bearer tokens are the origin's access JWTs, checked against the origin's JWKS. The key set is
 * cached in the isolate; an unknown `kid` refetches it, at most once per cooldown, so a flood of
 * forged kids cannot hammer the origin.
 */
const JWKS_COOLDOWN_MS = 30_000;
const JWKS_MAX_AGE_MS = 10 * 60_000;
const JWKS_TIMEOUT_MS = 3_000;

const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function originKeySet(originUrl: string) {
  let keySet = keySets.get(originUrl);
  if (!keySet) {
    keySet = createRemoteJWKSet(new URL(`${originUrl}/.well-known/jwks.json`), {
      cooldownDuration: JWKS_COOLDOWN_MS,
      cacheMaxAge: JWKS_MAX_AGE_MS,
      timeoutDuration: JWKS_TIMEOUT_MS,
    });
    keySets.set(originUrl, keySet);
  }
  return keySet;
}

export async function userFromAccessToken(token: string, originUrl: string, nowMs: number): Promise<Extract<Caller, { kind: 'user' }>> {
  let payload: unknown;
  try {
    ({ payload } = await jwtVerify(token, originKeySet(originUrl), {
      algorithms: [accessToken.algorithm],
      typ: accessToken.type,
      issuer: accessToken.issuer,
      audience: accessToken.audience,
      currentDate: new Date(nowMs),
    }));
  } catch (error) {
    // Not reaching the origin's keys says nothing about the token: that is our outage, not a 401.
    if (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError)) {
      console.error(JSON.stringify({ event: 'jwks_unavailable', error: (error as Error).name }));
      throw new ProblemError('unavailable', 'Bearer tokens cannot be checked right now; retry shortly.', {
        headers: { 'retry-after': '5' },
      });
    }
    throw new ProblemError('invalid_token', 'The Bearer token is not valid.', {
      headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
    });
  }
  const claims = accessTokenClaimsSchema.safeParse(payload);
  if (!claims.success) throw new ProblemError('invalid_token', 'The Bearer token lacks required claims.');
  return { kind: 'user', user_id: claims.data.sub, role: claims.data.role };
}
