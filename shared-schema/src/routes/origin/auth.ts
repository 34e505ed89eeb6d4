import { z } from 'zod';
import {
  changePasswordRequestSchema,
  loginRequestSchema,
  loginResponseSchema,
  logoutRequestSchema,
  logoutResponseSchema,
  refreshRequestSchema,
  registerRequestSchema,
  registerResponseSchema,
} from '../../auth.js';
import { defineRoute } from '../../contract.js';

/** Served by origin/src/auth/ (docs/CONTRACT.md#answers-to-the-specifications-gaps, docs/CONTRACT.md#contract-details): accounts, sessions and the keys that verify their tokens. */

export const jwksSchema = z
  .object({
    keys: z.array(z.object({ kty: z.string(), crv: z.string(), x: z.string(), kid: z.string(), alg: z.string(), use: z.string() })),
  })
  .meta({ id: 'JsonWebKeySet' });

export const registerRoute = defineRoute({
  method: 'post',
  path: '/api/v1/auth/register',
  operationId: 'register',
  summary: 'Create an owner account',
  tag: 'auth',
  auth: ['none'],
  body: registerRequestSchema,
  success: { status: 201, description: 'Account created', schema: registerResponseSchema },
  problems: ['validation_failed', 'malformed_json', 'email_taken', 'rate_limited', 'unavailable'],
});

export const loginRoute = defineRoute({
  method: 'post',
  path: '/api/v1/auth/login',
  operationId: 'login',
  summary: 'Exchange email and password for an access token and a refresh token',
  tag: 'auth',
  auth: ['none'],
  body: loginRequestSchema,
  success: { status: 200, description: 'Logged in', schema: loginResponseSchema },
  problems: ['invalid_credentials', 'validation_failed', 'malformed_json', 'rate_limited'],
});

export const refreshRoute = defineRoute({
  method: 'post',
  path: '/api/v1/auth/refresh',
  operationId: 'refresh',
  summary: 'Rotate a refresh token: the old one is spent, a new pair is returned; reusing a spent one revokes its family',
  tag: 'auth',
  auth: ['none'],
  body: refreshRequestSchema,
  success: { status: 200, description: 'New tokens', schema: loginResponseSchema },
  problems: ['invalid_token', 'validation_failed', 'malformed_json', 'refresh_token_reused'],
});

export const logoutRoute = defineRoute({
  method: 'post',
  path: '/api/v1/auth/logout',
  operationId: 'logout',
  summary: 'Sign out: revoke the session of a refresh token (its whole family); answers the same for a token already revoked or unknown',
  tag: 'auth',
  auth: ['none'],
  body: logoutRequestSchema,
  success: { status: 200, description: 'Signed out', schema: logoutResponseSchema },
  problems: ['validation_failed', 'malformed_json'],
});

export const changePasswordRoute = defineRoute({
  method: 'post',
  path: '/api/v1/auth/password',
  operationId: 'changePassword',
  summary:
    "Change the caller's password: every session of the account is revoked and a new one is returned; wrong current passwords count as failed logins",
  tag: 'auth',
  auth: ['bearer'],
  body: changePasswordRequestSchema,
  success: { status: 200, description: 'Password changed; a new session', schema: loginResponseSchema },
  problems: ['invalid_credentials', 'validation_failed', 'malformed_json', 'rate_limited'],
});

export const jwksRoute = defineRoute({
  method: 'get',
  path: '/.well-known/jwks.json',
  operationId: 'originJwks',
  summary: 'Public keys that verify the access tokens',
  tag: 'auth',
  auth: ['none'],
  success: { status: 200, description: 'JSON Web Key Set', schema: jwksSchema },
  problems: [],
});
