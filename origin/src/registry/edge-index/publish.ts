import type { VoiceIndexRecord } from '@vip/shared-schema';
import type { Database, Executor } from '../../db/client.js';
import type { LicenseRow, VoiceRow } from '../../db/schema.js';
import { enqueueEdgeUpdate } from '../../edge-link/outbox-store.js';
import { lockVoice, voiceIdsAfter } from '../../voice-records/store.js';
import { termsSha256Of } from '../licenses/terms.js';
import { listActiveLicenses } from './store.js';

/**
 * Publishes the voice's current state to the edge index (docs/ARCHITECTURE.md#consistency). Call it inside the
 * transaction that changed the voice, its consent or its licences, after the change; the caller
 * nudges the outbox after commit. A voice that no longer exists is published as a deletion.
 */
export async function publishToEdgeIndex(db: Executor, voiceId: string, now: Date): Promise<void> {
  const voice = await lockVoice(db, voiceId);
  const record = voice ? await toIndexRecord(voice, await listActiveLicenses(db, voiceId)) : null;
  await enqueueEdgeUpdate(db, { kind: 'voice', voice_id: voiceId, record }, now);
}

/** Voices republished per page: each in a transaction of its own, so a large registry locks one voice at a time. */
const REPUBLISH_PAGE = 200;

/**
 * Publishes every voice's current record again (`npm run edge:republish`): after the record's shape
 * changed (a field the edge did not have, such as a licence's `terms_sha256`) or after a database
 * restore. Each voice gets an update with a newer version, so the edge replaces what it holds.
 * Returns how many voices were queued; the outbox sender delivers them.
 */
export async function republishVoicesToEdgeIndex(db: Database, now: Date): Promise<number> {
  let count = 0;
  for (
    let page = await voiceIdsAfter(db, null, REPUBLISH_PAGE);
    page.length > 0;
    page = await voiceIdsAfter(db, page.at(-1)!, REPUBLISH_PAGE)
  ) {
    for (const voiceId of page) await db.transaction((tx) => publishToEdgeIndex(tx, voiceId, now));
    count += page.length;
  }
  return count;
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
