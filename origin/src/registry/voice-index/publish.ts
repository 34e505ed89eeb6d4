import type { VoiceIndexRecord } from '@vip/shared-schema';
import type { Executor } from '../../db/client.js';
import type { LicenseRow, VoiceRow } from '../../db/schema.js';
import { enqueueEdgeUpdate } from '../../edge-link/outbox-store.js';
import { lockVoice } from '../../voices/index.js';
import { termsSha256Of } from '../licenses/terms.js';
import { listActiveLicenses } from './store.js';

/**
 * Publishes the voice's current state to the edge index (docs/ARCHITECTURE.md#consistency). Call it inside the
 * transaction that changed the voice, its consent or its licences, after the change; the caller
 * nudges the outbox after commit. A voice that no longer exists is published as a deletion.
 */
export async function publishVoiceIndex(db: Executor, voiceId: string, now: Date): Promise<void> {
  const voice = await lockVoice(db, voiceId);
  const record = voice ? await toIndexRecord(voice, await listActiveLicenses(db, voiceId)) : null;
  await enqueueEdgeUpdate(db, { kind: 'voice', voice_id: voiceId, record }, now);
}

/**
 * A voice held for review grants nothing at the edge, whatever consent and licences it kept (a
 * re-enrolled voice can be held after both were given): it is published as a voice without consent
 * or licences, and its full record again once an administrator clears it.
 */
async function toIndexRecord(voice: VoiceRow, licenses: readonly LicenseRow[]): Promise<VoiceIndexRecord> {
  const held = voice.status === 'pending_review';
  return {
    voice_id: voice.id,
    owner_id: voice.ownerId,
    consent_status: held ? 'unknown' : voice.consentStatus,
    licenses: await Promise.all(
      (held ? [] : licenses).map(async (licence) => ({
        license_id: licence.id,
        platform_name: licence.platformName,
        scopes: licence.scopes,
        expires_at: licence.expiresAt.toISOString(),
        status: licence.status,
        token_hash: licence.tokenHash,
        terms_sha256: await termsSha256Of(licence),
      })),
    ),
  };
}
