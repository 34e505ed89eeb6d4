import { type AccessTokenClaims, accessToken, accessTokenClaimsSchema, limits, ProblemError, type UserRole } from '@vip/shared-schema';
import { loginRoute, refreshRoute } from '@vip/shared-schema/routes/origin/auth';
import { errors, exportJWK, generateKeyPair, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';

/** A refused access token: why, and how to get one that works (refresh it, or sign in again). */
const invalidAccessToken = (why: string) =>
  new ProblemError(
    'invalid_token',
    `${why} Get a new one with POST ${refreshRoute.path} and your refresh token, or sign in again with POST ${loginRoute.path}; ` +
      'then send it as Authorization: Bearer <access_token>.',
  );

export interface SigningJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  d: string;
  x: string;
  kid: string;
}

export interface AccessTokens {
  issue(subject: { userId: string; role: UserRole }, now: Date, jti: string): Promise<string>;
  /** Checks the algorithm (EdDSA only), typ, issuer, audience, expiry and the claim shapes. */
  verify(token: string, now: Date): Promise<AccessTokenClaims>;
  jwks(): { keys: JWK[] };
}

export async function createAccessTokens(privateJwk: SigningJwk): Promise<AccessTokens> {
  const { d: _private, ...publicJwk } = privateJwk;
  const signingKey = await importJWK(privateJwk, accessToken.algorithm);
  const verifyingKey = await importJWK(publicJwk, accessToken.algorithm);
  const published: JWK = { ...publicJwk, alg: accessToken.algorithm, use: 'sig' };
  return {
    async issue({ userId, role }, now, jti) {
      const iat = Math.floor(now.getTime() / 1000);
      return new SignJWT({ role })
        .setProtectedHeader({ alg: accessToken.algorithm, typ: accessToken.type, kid: privateJwk.kid })
        .setIssuer(accessToken.issuer)
        .setAudience(accessToken.audience)
        .setSubject(userId)
        .setIssuedAt(iat)
        .setExpirationTime(iat + limits.accessTokenTtlSeconds)
        .setJti(jti)
        .sign(signingKey);
    },
    async verify(token, now) {
      let payload: unknown;
      try {
        ({ payload } = await jwtVerify(token, verifyingKey, {
          algorithms: [accessToken.algorithm],
          typ: accessToken.type,
          issuer: accessToken.issuer,
          audience: accessToken.audience,
          currentDate: now,
          requiredClaims: ['exp', 'iat', 'sub', 'jti'],
        }));
      } catch (error) {
        throw invalidAccessToken(
          error instanceof errors.JWTExpired
            ? `The access token has expired (access tokens last ${limits.accessTokenTtlSeconds / 60} minutes).`
            : 'The Bearer token is not an access token of this service.',
        );
      }
      const claims = accessTokenClaimsSchema.safeParse(payload);
      if (!claims.success) throw invalidAccessToken('The access token lacks required claims.');
      return claims.data;
    },
    jwks: () => ({ keys: [published] }),
  };
}

export async function generateSigningJwk(kid: string): Promise<SigningJwk> {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const jwk = await exportJWK(privateKey);
  return { kty: 'OKP', crv: 'Ed25519', d: jwk.d!, x: jwk.x!, kid };
}
