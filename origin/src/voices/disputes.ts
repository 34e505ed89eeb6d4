import {
  type AuditActor,
  auditCaller,
  buildAuditRecord,
  type DisputeStatus,
  type listVoiceDisputesQuerySchema,
  ProblemError,
} from '@vip/shared-schema';
import type { z } from 'zod';
import { queueAuditRecords } from '../audit/index.js';
import { actorOf, type Principal } from '../auth/index.js';
import { attachConsentToVoice, findConsent, isUnusedConsentOf, lockConsent, usableConsent } from '../biometric-consent/index.js';
import type { Database, Executor } from '../db/client.js';
import type { VoiceDisputeRow } from '../db/schema.js';
import { recordEvent } from '../events/index.js';
import { decodeCursor, encodeCursor, keysetPage } from '../http/cursor.js';
import type { MultipartForm } from '../http/multipart-form.js';
import type { WakeSignal } from '../loops/wake-signal.js';
import { publishToEdgeIndex } from '../registry/index.js';
import type { Runtime } from '../runtime.js';
import type { SpokenConsentService } from '../spoken-consent/index.js';
import * as store from '../voice-records/store.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';
import { enrollmentFormOf, summarizeQuality } from './uploads.js';

/**
 * Voice disputes (docs/DECISIONS.md#voice-disputes): the way back for a person whose voice another
 * account enrolled. The claimant sends recordings of their voice and a spoken consent, checked as an
 * enrollment's (the challenge, no synthetic marks, the voice of the recordings, the statement, the
 * phrase); the nearest voice of another owner at or above the enrollment review point is held for
 * the administrators' review queue (voices/reviews.ts), granting nothing, and its owner is told. The
 * claimant never learns the voice's id or owner, and its owner never learns the claimant's.
 */

export interface VoiceDisputeServiceDeps {
  db: Database;
  runtime: Runtime;
  outbox: WakeSignal;
  /** Absent in processes that serve no audio: opening a dispute answers 503. */
  engine?: VoiceprintEngine;
  spokenConsent: SpokenConsentService;
}

export class VoiceDisputeService {
  constructor(private readonly deps: VoiceDisputeServiceDeps) {}

  async open(principal: Principal, form: MultipartForm) {
    const { db, runtime, spokenConsent } = this.deps;
    const engine = this.deps.engine;
    if (!engine) throw new ProblemError('unavailable', 'This process has no voiceprint engine.');
    const { name, consentId, files } = enrollmentFormOf(form);
    usableConsent(await findConsent(db, consentId), principal.userId);
    const spoken = await spokenConsent.submissionOf(principal, form, 'required');

    const claimant = await engine.embedMany(
      files.map((file) => file.bytes),
      files.map((file) => file.filename),
    );
    const verified = await spokenConsent.verify(principal, spoken, claimant, engine);
    const quality = summarizeQuality(claimant.files, files);
    const now = runtime.clock.now();
    const dispute = await db.transaction(async (tx) => {
      // The same turn as enrollments: a voice enrolled meanwhile is found, or finds the hold.
      await store.serializeEnrollments(tx, claimant.model);
      usableConsent(await lockConsent(tx, consentId), principal.userId);
      const nearest = await store.nearestVoice(tx, claimant, principal.userId);
      if (!nearest || nearest.similarity < engine.points(claimant.model).enrollment_vs_enrollment.review) {
        throw new ProblemError(
          'not_found',
          'No voice of another owner sounds like these recordings, so there is nothing to dispute: enroll your voice (POST /api/v1/voices/enroll) instead.',
        );
      }
      const voice = await store.lockVoice(tx, nearest.voiceId);
      if (voice?.status !== 'ready') {
        throw new ProblemError(
          'voice_under_review',
          'The voice that sounds like these recordings is already held for an administrator, who decides on it first; nothing of your recordings was kept. Dispute it again once that review has ended.',
        );
      }
      await spokenConsent.spend(tx, verified.challengeId, now);
      const opened = await store.insertDispute(tx, {
        id: runtime.newId(),
        claimantId: principal.userId,
        voiceId: voice.id,
        status: 'open',
        name,
        consentId,
        similarity: nearest.similarity,
        model: claimant.model,
        embedding: claimant.embedding,
        speechSeconds: claimant.speechSeconds,
        quality,
        spokenEvidence: verified.evidence,
        recording: Buffer.from(verified.recording.bytes),
        recordingFilename: verified.recording.filename,
        checkId: runtime.newId(),
        openedAt: now,
      });
      await store.setVoiceStatus(tx, voice.id, 'pending_review', now);
      await store.insertReview(tx, { voiceId: voice.id, matchedVoiceId: null, similarity: nearest.similarity, heldAt: now });
      await recordEvent(
        tx,
        { type: 'voice.review_pending', voiceId: voice.id, ownerId: voice.ownerId, fields: { role: 'disputed_voice' } },
        now,
      );
      await queueAuditRecords(
        tx,
        [
          disputeAuditRecord('opened', null, opened.id, actorOf(principal), opened.checkId, now),
          disputeAuditRecord('opened', voice.id, 'disputed_voice', { type: 'system' }, runtime.newId(), now),
        ],
        now,
      );
      // Held, the voice grants nothing at the edge until it is cleared (edge-index/publish.ts).
      await publishToEdgeIndex(tx, voice.id, now);
      return opened;
    });
    this.deps.outbox.nudge();
    return disputeAnswer(dispute);
  }

  async list(principal: Principal, query: z.output<typeof listVoiceDisputesQuerySchema>) {
    const after = decodeCursor(query.cursor);
    const { rows, nextCursor } = await keysetPage(
      query.limit,
      (rowsWanted) => store.listDisputesOfClaimant(this.deps.db, principal.userId, rowsWanted, after),
      (last) => encodeCursor({ at: last.openedAt, id: last.id }),
    );
    return { disputes: rows.map(disputeAnswer), next_cursor: nextCursor };
  }
}

type ClosedStatus = Exclude<DisputeStatus, 'open'>;

/**
 * Ends the voice's open dispute in the caller's transaction, if there is one, and tells the claimant:
 * an administrator's decision, or the voice erased by its owner (`voice_deleted`). On a transfer the
 * claimant's new voice is `transferredVoiceId`, which the event names.
 */
export async function closeDispute(
  tx: Executor,
  voiceId: string,
  status: ClosedStatus,
  now: Date,
  transferredVoiceId: string | null = null,
): Promise<void> {
  const closed = await store.closeOpenDisputeOfVoice(tx, voiceId, status, now, transferredVoiceId);
  if (!closed) return;
  await recordEvent(
    tx,
    { type: 'voice.dispute_closed', voiceId: transferredVoiceId, ownerId: closed.claimantId, fields: { dispute_id: closed.id, status } },
    now,
  );
}

/**
 * In an administrator's transfer of a disputed voice, once the disputed voice is erased: the
 * claimant's voiceprint becomes a voice of theirs, with the biometric consent and the spoken consent
 * of the dispute. A consent used for another voice since the dispute was opened answers 409, and the
 * administrator clears or rejects instead.
 */
export async function enrollClaimant(
  tx: Executor,
  runtime: Runtime,
  spokenConsent: SpokenConsentService,
  dispute: store.OpenDispute,
  admin: Principal,
  now: Date,
): Promise<{ voiceId: string; checkId: string }> {
  if (!isUnusedConsentOf(await lockConsent(tx, dispute.consentId), dispute.claimantId)) {
    throw new ProblemError(
      'conflict',
      "The claimant's biometric consent was used for another voice since the dispute was opened, so the voice cannot be transferred: clear or reject it, and the claimant can dispute or enroll again.",
    );
  }
  const { embedding, recording } = dispute;
  if (!embedding || !recording) throw new Error(`open dispute ${dispute.id} has lost its voiceprint`);
  const voice = await store.insertVoice(tx, {
    id: runtime.newId(),
    ownerId: dispute.claimantId,
    name: dispute.name,
    status: 'ready',
    model: dispute.model,
    speechSeconds: dispute.speechSeconds,
    quality: dispute.quality,
    createdAt: now,
    updatedAt: now,
  });
  await store.insertEmbedding(tx, { voiceId: voice.id, ownerId: dispute.claimantId, model: dispute.model, embedding });
  await attachConsentToVoice(tx, dispute.consentId, voice.id);
  await spokenConsent.keepWithVoice(
    tx,
    { recording: { bytes: recording, filename: dispute.recordingFilename ?? 'spoken-consent' }, evidence: dispute.spokenEvidence },
    voice.id,
    actorOf(admin),
    now,
  );
  const checkId = runtime.newId();
  await queueAuditRecords(tx, [disputeAuditRecord('transferred', voice.id, 'claimant', actorOf(admin), checkId, now)], now);
  // The new voice answers blocked/no_consent at the gate until its owner grants synthesis consent.
  await publishToEdgeIndex(tx, voice.id, now);
  return { voiceId: voice.id, checkId };
}

type DisputeAction = 'opened' | ClosedStatus;

/**
 * A dispute's audit record. `reason` says whose side it is on: the claimant's (the dispute id, on no
 * voice, or `claimant` on their transferred voice) or the disputed voice's (`disputed_voice`).
 */
export function disputeAuditRecord(
  action: Exclude<DisputeAction, 'voice_deleted'>,
  voiceId: string | null,
  reason: string,
  actor: AuditActor,
  checkId: string,
  now: Date,
) {
  return buildAuditRecord('voice.dispute', {
    check_id: checkId,
    decided_at: now,
    voice_id: voiceId,
    action,
    reason,
    ...auditCaller(actor),
  });
}

function disputeAnswer(
  dispute: Pick<VoiceDisputeRow, 'id' | 'status' | 'name' | 'openedAt' | 'decidedAt' | 'transferredVoiceId' | 'checkId'>,
) {
  return {
    dispute_id: dispute.id,
    status: dispute.status,
    name: dispute.name,
    opened_at: dispute.openedAt.toISOString(),
    decided_at: dispute.decidedAt?.toISOString() ?? null,
    voice_id: dispute.transferredVoiceId,
    check_id: dispute.checkId,
  };
}
