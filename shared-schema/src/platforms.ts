import { z } from 'zod';
import { isoTimestamp, uuid } from './common.js';
import { limits } from './limits.js';

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
