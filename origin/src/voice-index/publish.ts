import type { VoiceIndexRecord } from '@vip/shared-schema';
import type { Executor } from '../db/client.js';
import { enqueueEdgeUpdate } from '../edge-sync/store.js';
import { type LicenseRow, listActiveLicenses, lockVoice, type VoiceRow } from './store.js';

/**
 * Publishes the voice's current state to the edge index (docs/ARCHITECTURE.md#consistency). Call it inside the
 * transaction that changed the voice, its consent or its licences, after the change; the caller
 * nudges the outbox after commit. A voice that no longer exists is published as a deletion.
 */
export async function publishVoiceIndex(db: Executor, voiceId: string, now: Date): Promise<void> {
  const voice = await lockVoice(db, voiceId);
  const record = voice ? toIndexRecord(voice, await listActiveLicenses(db, voiceId)) : null;
  await enqueueEdgeUpdate(db, { kind: 'voice', voice_id: voiceId, record }, now);
}

function toIndexRecord(voice: VoiceRow, licenses: readonly LicenseRow[]): VoiceIndexRecord {
  return {
    voice_id: voice.id,
    owner_id: voice.ownerId,
    consent_status: voice.consentStatus,
    licenses: licenses.map((licence) => ({
      license_id: licence.id,
      platform_name: licence.platformName,
      scopes: licence.scopes,
      expires_at: licence.expiresAt.toISOString(),
      status: licence.status,
      token_hash: licence.tokenHash,
    })),
  };
}
