import { type AuthorizationTokenClaims, authorizationToken, authorizationTokenClaimsSchema, ProblemError } from '@vip/shared-schema';
import { base64url, calculateJwkThumbprint, errors, importJWK, jwtVerify } from 'jose';
import type { EdgeConfig } from '../config.js';

/**
 * Authorization tokens (docs/CONTRACT.md#authorization-tokens): compact JWS, EdDSA, signed with the Worker secret
 * AUTH_TOKEN_PRIVATE_JWK and verified against its public half, which /.well-known/jwks.json serves.
 */
type PrivateJwk = EdgeConfig['authTokenPrivateJwk'];

interface SigningKeys {
  kid: string;
  /** The JWS protected header, encoded: the same for every token of this key. */
  encodedHeader: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JsonWebKey & { kid: string; alg: string; use: string };
}

const keysByJwk = new Map<string, Promise<SigningKeys>>();

async function loadKeys(jwk: PrivateJwk): Promise<SigningKeys> {
  const kid = jwk.kid ?? (await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }));
  // Built field by field, so the private `d` can never reach the published key set.
  const publicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid, alg: authorizationToken.algorithm, use: 'sig' };
  const privateKey = (await importJWK({ ...jwk, kid }, authorizationToken.algorithm)) as CryptoKey;
  const publicKey = (await importJWK(publicJwk, authorizationToken.algorithm)) as CryptoKey;
  const encodedHeader = base64url.encode(JSON.stringify({ alg: authorizationToken.algorithm, typ: authorizationToken.type, kid }));
  return { kid, encodedHeader, privateKey, publicKey, publicJwk };
}

/** Keys are imported once per isolate and key (`x` is the public key, enough to tell keys apart). */
export function signingKeys(config: EdgeConfig): Promise<SigningKeys> {
  const jwk = config.authTokenPrivateJwk;
  const cacheKey = `${jwk.kid ?? ''}.${jwk.x}`;
  let keys = keysByJwk.get(cacheKey);
  if (!keys) {
    keys = loadKeys(jwk);
    keysByJwk.set(cacheKey, keys);
  }
  return keys;
}

const encoder = new TextEncoder();

/**
 * Compact JWS by hand over WebCrypto (RFC 7515 section 7.1): every approval signs one, and jose's
 * SignJWT cost about 18 µs more per token than the signature itself (issue 17). Verification, where
 * a mistake would matter, stays jose's.
 */
export async function signAuthorizationToken(config: EdgeConfig, claims: Omit<AuthorizationTokenClaims, 'iss'>): Promise<string> {
  const { encodedHeader, privateKey } = await signingKeys(config);
  const signingInput = `${encodedHeader}.${base64url.encode(JSON.stringify({ ...claims, iss: authorizationToken.issuer }))}`;
  const signature = await crypto.subtle.sign('Ed25519', privateKey, encoder.encode(signingInput));
  return `${signingInput}.${base64url.encode(new Uint8Array(signature))}`;
}

/** 410 when expired (the signature is checked first), 401 for anything else that is not ours. */
export async function verifyAuthorizationToken(config: EdgeConfig, token: string, nowMs: number): Promise<AuthorizationTokenClaims> {
  const { publicKey } = await signingKeys(config);
  let payload: unknown;
  try {
    ({ payload } = await jwtVerify(token, publicKey, {
      algorithms: [authorizationToken.algorithm],
      typ: authorizationToken.type,
      issuer: authorizationToken.issuer,
      currentDate: new Date(nowMs),
      requiredClaims: ['exp', 'iat', 'jti'],
    }));
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw new ProblemError('token_expired', 'The authorization token has expired.');
    throw new ProblemError('invalid_token', 'The authorization token is not valid.');
  }
  const claims = authorizationTokenClaimsSchema.safeParse(payload);
  if (!claims.success) throw new ProblemError('invalid_token', 'The authorization token lacks required claims.');
  return claims.data;
}
