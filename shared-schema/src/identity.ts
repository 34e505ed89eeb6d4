import { z } from 'zod';
import { isoTimestamp, uuid } from './common.js';
import { USER_ROLES } from './enums.js';
import { limits } from './limits.js';

/** Claims and header of the origin's access JWTs (RFC 8725, RFC 9068). Both planes check them. */
export const accessToken = {
  issuer: 'urn:vip:origin',
  audience: 'urn:vip:api',
  type: 'at+jwt',
  algorithm: 'EdDSA',
} as const;

export const accessTokenClaimsSchema = z.object({
  sub: uuid,
  role: z.enum(USER_ROLES),
  iss: z.literal(accessToken.issuer),
  aud: z.literal(accessToken.audience),
  iat: z.number().int(),
  exp: z.number().int(),
  jti: z.string(),
});
export type AccessTokenClaims = z.infer<typeof accessTokenClaimsSchema>;

const email = z
  .email()
  .max(254)
  .transform((value) => value.toLowerCase());
const password = z.string().min(limits.passwordMinLength).max(limits.passwordMaxLength);

export const registerRequestSchema = z.strictObject({ email, password }).meta({ id: 'RegisterRequest' });
export const registerResponseSchema = z.object({ user_id: uuid, email: z.string() }).meta({ id: 'RegisterResponse' });

/** Login does not enforce the password policy: old passwords must still log in after a policy change. */
export const loginRequestSchema = z
  .strictObject({ email, password: z.string().min(1).max(limits.passwordMaxLength) })
  .meta({ id: 'LoginRequest' });
export const loginResponseSchema = z
  .object({
    access_token: z.string(),
    token_type: z.literal('bearer'),
    user_id: uuid,
    email: z.email().describe('The signed-in account’s email address, so a client can say who is signed in.'),
    refresh_token: z.string(),
    expires_in: z.number().int(),
  })
  .meta({ id: 'LoginResult' });

export const refreshRequestSchema = z.strictObject({ refresh_token: z.string().min(1).max(512) }).meta({ id: 'RefreshRequest' });
export const logoutRequestSchema = z.strictObject({ refresh_token: z.string().min(1).max(512) }).meta({ id: 'LogoutRequest' });
export const logoutResponseSchema = z.object({ signed_out: z.literal(true) }).meta({ id: 'LogoutResult' });

/** The current password proves it is the owner at the keyboard, not a borrowed access token; the new one meets the policy. */
export const changePasswordRequestSchema = z
  .strictObject({ current_password: z.string().min(1).max(limits.passwordMaxLength), new_password: password })
  .meta({ id: 'ChangePasswordRequest' });

/** Platform names are what TTS platforms send as `platform_name` in the gate. */
export const platformName = z
  .string()
  .min(1)
  .max(limits.platformNameMaxLength)
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, 'letters, digits, space, dot, underscore and hyphen');

/**
 * Why a platform's API key may not act under `given` (both planes: the gate, screening, licence
 * requests), or null when it may. Names are matched exactly, so a difference of case alone is the
 * likeliest slip, and the answer names the spelling to send (the key's own platform, no one else's).
 */
export function platformNameMismatch(keyPlatform: string, given: string): string | null {
  if (given === keyPlatform) return null;
  if (given.toLowerCase() === keyPlatform.toLowerCase()) {
    return `platform_name "${given}" differs from this API key's platform only in case; names are matched exactly: send "${keyPlatform}".`;
  }
  return `This API key belongs to another platform: send its own platform's name as platform_name ("${keyPlatform}").`;
}

export const createPlatformRequestSchema = z.strictObject({ name: platformName }).meta({ id: 'CreatePlatformRequest' });
export const platformSchema = z.object({ platform_id: uuid, name: z.string(), created_at: isoTimestamp }).meta({ id: 'Platform' });
export const platformListSchema = z.object({ platforms: z.array(platformSchema) }).meta({ id: 'PlatformList' });

export const API_KEY_PREFIX = 'vip_';
export const createApiKeyRequestSchema = z.strictObject({}).meta({ id: 'CreateApiKeyRequest' });
export const createdApiKeySchema = z
  .object({ key_id: uuid, api_key: z.string().startsWith(API_KEY_PREFIX), created_at: isoTimestamp })
  .meta({ id: 'CreatedApiKey' });
export const apiKeySummarySchema = z
  .object({
    key_id: uuid,
    platform_id: uuid,
    prefix: z.string().describe('first characters of the key, enough to recognise it'),
    created_at: isoTimestamp,
    revoked_at: isoTimestamp.nullable(),
  })
  .meta({ id: 'ApiKeySummary' });
export const apiKeyListSchema = z.object({ api_keys: z.array(apiKeySummarySchema) }).meta({ id: 'ApiKeyList' });
export const revokedApiKeySchema = z.object({ key_id: uuid, revoked: z.literal(true) }).meta({ id: 'RevokedApiKey' });

export const platformParamsSchema = z.strictObject({ platform_id: uuid });
export const apiKeyParamsSchema = z.strictObject({ platform_id: uuid, key_id: uuid });
