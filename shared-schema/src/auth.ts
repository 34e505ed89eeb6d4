import { z } from 'zod';
import { uuid } from './common.js';
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
