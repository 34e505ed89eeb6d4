import { z } from 'zod';
import { hexDigest, isoTimestamp, uuid } from './common.js';
import { CONSENT_STATUSES, INTENDED_USES, LICENSE_STATES } from './enums.js';

/**
 * What the origin publishes to the edge (docs/ARCHITECTURE.md#consistency). Every update carries a version that
 * only grows (the origin's outbox sequence), so the edge can drop a stale or replayed update.
 * A `null` record deletes the entry.
 */
export const apiKeyIndexRecordSchema = z.object({
  key_id: uuid,
  platform_id: uuid,
  platform_name: z.string(),
  revoked: z.boolean(),
});
export type ApiKeyIndexRecord = z.infer<typeof apiKeyIndexRecordSchema>;

export const voiceLicenseIndexSchema = z.object({
  license_id: uuid,
  platform_name: z.string(),
  scopes: z.array(z.enum(INTENDED_USES)),
  expires_at: isoTimestamp,
  status: z.enum(LICENSE_STATES),
  /** SHA-256 of the licence token, so the edge can match a `license_token` without holding it. */
  token_hash: hexDigest,
  /**
   * SHA-256 of the licence's canonical terms (license-terms.ts), which the gate writes into the audit
   * entry of each approval this licence backs. Absent only from records published before licences
   * had terms: the voice's next change, or `npm run edge:republish`, publishes it.
   */
  terms_sha256: hexDigest.optional(),
});
export type VoiceLicenseIndex = z.infer<typeof voiceLicenseIndexSchema>;

export const voiceIndexRecordSchema = z.object({
  voice_id: uuid,
  owner_id: uuid,
  consent_status: z.enum(CONSENT_STATUSES),
  licenses: z.array(voiceLicenseIndexSchema),
});
export type VoiceIndexRecord = z.infer<typeof voiceIndexRecordSchema>;

const version = z.number().int().positive();

export const syncUpdateSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('api_key'), key_hash: hexDigest, version, record: apiKeyIndexRecordSchema.nullable() }),
  z.object({ kind: z.literal('voice'), voice_id: uuid, version, record: voiceIndexRecordSchema.nullable() }),
]);
export type SyncUpdate = z.infer<typeof syncUpdateSchema>;

export const syncBatchSchema = z.object({ updates: z.array(syncUpdateSchema).min(1).max(500) });
export type SyncBatch = z.infer<typeof syncBatchSchema>;

export const syncAckSchema = z.object({ applied: z.number().int(), stale: z.number().int() });
export type SyncAck = z.infer<typeof syncAckSchema>;

/** Internal routes (HMAC-authenticated, see internal-auth.ts). */
export const INTERNAL_SYNC_PATH = '/internal/v1/index-sync';

/** KV key layout of the edge index. */
export const kvKeys = {
  apiKey: (keyHash: string) => `apikey:${keyHash}`,
  voice: (voiceId: string) => `voice:${voiceId}`,
} as const;
