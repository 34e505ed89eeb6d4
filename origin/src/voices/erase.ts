import { queueAuditRecords } from '../audit/index.js';
import type { Principal } from '../auth/index.js';
import * as consents from '../biometric-consent/index.js';
import type { Executor } from '../db/client.js';
import type { VoiceRow } from '../db/schema.js';
import { recordEvent } from '../events/index.js';
import { closePendingRequests } from '../license-requests/index.js';
import { countLicensesOfVoice, publishToEdgeIndex } from '../registry/index.js';
import type { Runtime } from '../runtime.js';
import * as store from '../voice-records/store.js';
import { voiceAuditRecord } from './audit-records.js';
import { closeDispute } from './disputes.js';

/**
 * Erases the voice, locked by the caller's transaction: its consents, embedding, licences (by
 * cascade) and row; publishes the deletion to the edge; records `voice.deleted` and its audit
 * record; closes the voice's pending licence requests and open dispute. Answers the erasure receipt. DELETE and an administrator's rejection of a held voice
 * both erase through here. The caller nudges the outbox after commit.
 */
export async function eraseVoice(tx: Executor, runtime: Runtime, voice: VoiceRow, principal: Principal, now: Date) {
  const receipt = {
    licenses: await countLicensesOfVoice(tx, voice.id),
    consents: await consents.deleteConsentsOfVoice(tx, voice.id),
    embeddings: await store.deleteEmbeddingsOfVoice(tx, voice.id),
    edge_index: true,
  };
  // A dispute still open ends with the voice; its claimant is told, and may enroll their voice now.
  await closeDispute(tx, voice.id, 'voice_deleted', now);
  await store.deleteVoice(tx, voice.id);
  await closePendingRequests(tx, voice, 'voice_deleted', { type: 'user', userId: principal.userId }, runtime, now);
  await publishToEdgeIndex(tx, voice.id, now);
  await recordEvent(tx, { type: 'voice.deleted', voiceId: voice.id, ownerId: voice.ownerId, fields: { erased: receipt } }, now);
  await queueAuditRecords(tx, [voiceAuditRecord('voice.deleted', voice.id, principal, now, runtime.newId())], now);
  return receipt;
}
