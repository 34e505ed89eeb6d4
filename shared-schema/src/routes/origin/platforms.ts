import { defineRoute } from '../../contract.js';
import {
  apiKeyListSchema,
  apiKeyParamsSchema,
  createApiKeyRequestSchema,
  createdApiKeySchema,
  createPlatformRequestSchema,
  platformListSchema,
  platformParamsSchema,
  platformSchema,
  revokedApiKeySchema,
} from '../../platforms.js';

/** Served by origin/src/platforms/ (docs/CONTRACT.md#contract-details): the TTS platforms and their API keys, kept by an administrator. */

const adminProblems = ['forbidden'] as const;

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
