import { z } from 'zod';
import { defineRoute } from '../contract.js';
import { serviceIndexSchema } from '../health.js';
import {
  apiKeyListSchema,
  apiKeyParamsSchema,
  changePasswordRequestSchema,
  createApiKeyRequestSchema,
  createdApiKeySchema,
  createPlatformRequestSchema,
  loginRequestSchema,
  loginResponseSchema,
  logoutRequestSchema,
  logoutResponseSchema,
  platformListSchema,
  platformParamsSchema,
  platformSchema,
  refreshRequestSchema,
  registerRequestSchema,
  registerResponseSchema,
  revokedApiKeySchema,
} from '../identity.js';

/** The origin's identity routes (docs/CONTRACT.md#answers-to-the-specifications-gaps, docs/CONTRACT.md#contract-details): accounts, sessions, platforms and their API keys. */

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
  problems: ['validation_failed', 'malformed_json', 'email_taken'],
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
  problems: ['validation_failed', 'malformed_json', 'invalid_credentials', 'rate_limited'],
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
  problems: ['validation_failed', 'malformed_json', 'invalid_token', 'refresh_token_reused'],
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
  problems: ['authentication_required', 'invalid_token', 'validation_failed', 'malformed_json', 'invalid_credentials', 'rate_limited'],
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

const adminProblems = ['authentication_required', 'invalid_token', 'forbidden'] as const;

export const createPlatformRoute = defineRoute({
  method: 'post',
  path: '/api/v1/platforms',
  operationId: 'createPlatform',
  summary: 'Register a TTS platform (admin)',
  tag: 'platforms',
  auth: ['bearer'],
  body: createPlatformRequestSchema,
  success: { status: 201, description: 'Platform created', schema: platformSchema },
  problems: [...adminProblems, 'validation_failed', 'malformed_json', 'conflict'],
});

export const listPlatformsRoute = defineRoute({
  method: 'get',
  path: '/api/v1/platforms',
  operationId: 'listPlatforms',
  summary: 'List platforms (admin)',
  tag: 'platforms',
  auth: ['bearer'],
  success: { status: 200, description: 'Platforms', schema: platformListSchema },
  problems: [...adminProblems],
});

export const createApiKeyRoute = defineRoute({
  method: 'post',
  path: '/api/v1/platforms/{platform_id}/api-keys',
  operationId: 'createApiKey',
  summary: 'Create an API key for a platform (admin); the key is shown only in this response',
  tag: 'platforms',
  auth: ['bearer'],
  params: platformParamsSchema,
  body: createApiKeyRequestSchema,
  success: { status: 201, description: 'API key created', schema: createdApiKeySchema },
  problems: [...adminProblems, 'validation_failed', 'malformed_json', 'not_found'],
});

export const listApiKeysRoute = defineRoute({
  method: 'get',
  path: '/api/v1/platforms/{platform_id}/api-keys',
  operationId: 'listApiKeys',
  summary: "List a platform's API keys without their secrets (admin)",
  tag: 'platforms',
  auth: ['bearer'],
  params: platformParamsSchema,
  success: { status: 200, description: 'API keys', schema: apiKeyListSchema },
  problems: [...adminProblems, 'validation_failed', 'not_found'],
});

export const revokeApiKeyRoute = defineRoute({
  method: 'delete',
  path: '/api/v1/platforms/{platform_id}/api-keys/{key_id}',
  operationId: 'revokeApiKey',
  summary: 'Revoke an API key (admin); the edge stops accepting it within a second',
  tag: 'platforms',
  auth: ['bearer'],
  params: apiKeyParamsSchema,
  success: { status: 200, description: 'API key revoked', schema: revokedApiKeySchema },
  problems: [...adminProblems, 'validation_failed', 'not_found'],
});

export const originOpenApiRoute = defineRoute({
  method: 'get',
  path: '/openapi.json',
  operationId: 'originOpenApi',
  summary: 'This OpenAPI 3.1 document',
  tag: 'meta',
  auth: ['none'],
  success: { status: 200, description: 'OpenAPI document', contentType: 'application/json' },
  problems: [],
});

export const originIndexRoute = defineRoute({
  method: 'get',
  path: '/',
  operationId: 'originIndex',
  summary: 'Points to the API reference (`/docs`) and the OpenAPI document',
  tag: 'meta',
  auth: ['none'],
  success: { status: 200, description: 'Where the reference is', schema: serviceIndexSchema },
  problems: [],
});

export const originDocsRoute = defineRoute({
  method: 'get',
  path: '/docs',
  operationId: 'originDocs',
  summary: 'Readable API reference',
  tag: 'meta',
  auth: ['none'],
  success: { status: 200, description: 'HTML page', contentType: 'text/html' },
  problems: [],
});
