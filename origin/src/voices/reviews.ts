import { auditCaller, buildAuditRecord, type listVoiceReviewsQuerySchema, ProblemError, type ReviewDecision } from '@vip/shared-schema';
import type { z } from 'zod';
import { queueAuditRecords } from '../audit/index.js';
import { actorOf, type Principal } from '../auth/index.js';
import type { Database, Executor } from '../db/client.js';
import type { VoiceRow } from '../db/schema.js';
import { recordEvent } from '../events/index.js';
import { decodeCursor, encodeCursor, keysetPage } from '../http/cursor.js';
import type { WakeSignal } from '../loops/wake-signal.js';
import { publishToEdgeIndex } from '../registry/index.js';
import type { Runtime } from '../runtime.js';
import type { SpokenConsentService } from '../spoken-consent/index.js';
import * as store from '../voice-records/store.js';
import { closeDispute, disputeAuditRecord, enrollClaimant } from './disputes.js';
import { eraseVoice } from './erase.js';

/**
 * The identity-conflict review band (docs/ARCHITECTURE.md#voiceprints): an enrollment whose nearest voice of another
 * owner lies between the review and the strict point is stored as `pending_review`. It answers
 * blocked/no_consent at the gate and can get neither synthesis consent nor licences (409
 * `voice_under_review`) until an administrator clears it; a rejection erases it as DELETE does.
 */

type ReviewStage = 'held' | 'cleared' | 'rejected';

const EVENT_OF: Record<ReviewStage, 'voice.review_pending' | 'voice.review_cleared' | 'voice.review_rejected'> = {
  held: 'voice.review_pending',
  cleared: 'voice.review_cleared',
  rejected: 'voice.review_rejected',
};

/** One side of a review: the held voice, or the other owner's voice it resembles. */
interface Party {
  voiceId: string;
  ownerId: string;
}

/** Stores why the new voice is held and tells both owners; in the enrollment's transaction. */
export async function holdForReview(
  tx: Executor,
  runtime: Runtime,
  voice: VoiceRow,
  match: Party & { similarity: number },
  principal: Principal,
  now: Date,
): Promise<void> {
  await store.insertReview(tx, { voiceId: voice.id, matchedVoiceId: match.voiceId, similarity: match.similarity, heldAt: now });
  await tellBothOwners(tx, runtime, 'held', { voiceId: voice.id, ownerId: voice.ownerId }, match, principal, now);
}

export interface VoiceReviewServiceDeps {
  db: Database;
  runtime: Runtime;
  outbox: WakeSignal;
  /** Keeps a transferred claimant's spoken consent with their new voice. */
  spokenConsent: SpokenConsentService;
}

/** The administrators' side of the band: the queue of held voices, and the decision on one. */
export class VoiceReviewService {
  constructor(private readonly deps: VoiceReviewServiceDeps) {}

  async list(query: z.output<typeof listVoiceReviewsQuerySchema>) {
    const after = decodeCursor(query.cursor);
    const { rows, nextCursor } = await keysetPage(
      query.limit,
      (rowsWanted) => store.listReviews(this.deps.db, rowsWanted, after),
      (last) => encodeCursor({ at: last.heldAt, id: last.voiceId }),
    );
    return {
      reviews: rows.map((row) => ({
        voice_id: row.voiceId,
        owner_id: row.ownerId,
        name: row.name,
        model: row.model,
        speech_seconds: row.speechSeconds,
        held_at: row.heldAt.toISOString(),
        reason: row.disputeId ? ('dispute' as const) : ('identity_conflict' as const),
        matched_voice_id: row.matchedVoiceId,
        matched_owner_id: row.matchedOwnerId,
        similarity: row.similarity,
        dispute:
          row.disputeId && row.claimantId && row.disputeOpenedAt && row.disputeEvidence
            ? {
                dispute_id: row.disputeId,
                claimant_id: row.claimantId,
                opened_at: row.disputeOpenedAt.toISOString(),
                spoken_consent: row.disputeEvidence,
              }
            : null,
      })),
      next_cursor: nextCursor,
    };
  }

  /**
   * Under the voice's lock, so two administrators deciding at once cannot both act: the second finds
   * the voice ready (409) or gone (404).
   */
  async decide(principal: Principal, voiceId: string, decision: ReviewDecision) {
    const { db, runtime } = this.deps;
    const now = runtime.clock.now();
    const outcome = await db.transaction(async (tx) => {
      const voice = await store.lockVoice(tx, voiceId);
      if (!voice) throw new ProblemError('not_found', 'No such voice.');
      if (voice.status !== 'pending_review') throw new ProblemError('conflict', 'This voice is not held for review.');
      const dispute = await store.lockOpenDisputeOfVoice(tx, voiceId);
      if (dispute) return this.decideDispute(tx, voice, dispute, decision, principal, now);
      if (decision === 'transfer') {
        throw new ProblemError(
          'conflict',
          "Only a disputed voice can be transferred: this one is held because its enrollment resembles another owner's voice. Clear or reject it.",
        );
      }
      const held = { voiceId: voice.id, ownerId: voice.ownerId };
      const matched = await store.findMatchedVoice(tx, voiceId);
      if (decision === 'clear') {
        await releaseHold(tx, voiceId, now);
        const checkId = await tellBothOwners(tx, runtime, 'cleared', held, matched, principal, now);
        return { status: 'ready' as const, transferred_voice_id: null, check_id: checkId };
      }
      const checkId = await tellBothOwners(tx, runtime, 'rejected', held, matched, principal, now);
      await eraseVoice(tx, runtime, voice, principal, now);
      return { status: 'rejected' as const, transferred_voice_id: null, check_id: checkId };
    });
    this.deps.outbox.nudge();
    return { voice_id: voiceId, ...outcome };
  }

  /**
   * A disputed voice (voices/disputes.ts): cleared, it is its owner's again; rejected, it is erased;
   * transferred, the claimant's voiceprint becomes their voice first, then the disputed one is erased.
   * Its owner hears of it as of a review of their voice (`disputed_voice`), the claimant by
   * `voice.dispute_closed`; neither learns the other's ids.
   */
  private async decideDispute(
    tx: Executor,
    voice: VoiceRow,
    dispute: store.OpenDispute,
    decision: ReviewDecision,
    principal: Principal,
    now: Date,
  ) {
    const { runtime } = this.deps;
    const checkId = runtime.newId();
    const record = (action: 'cleared' | 'rejected' | 'transferred') =>
      queueAuditRecords(tx, [disputeAuditRecord(action, voice.id, 'disputed_voice', actorOf(principal), checkId, now)], now);
    const tellOwner = (type: 'voice.review_cleared' | 'voice.review_rejected') =>
      recordEvent(tx, { type, voiceId: voice.id, ownerId: voice.ownerId, fields: { role: 'disputed_voice' } }, now);
    if (decision === 'clear') {
      await releaseHold(tx, voice.id, now);
      await closeDispute(tx, voice.id, 'cleared', now);
      await tellOwner('voice.review_cleared');
      await record('cleared');
      return { status: 'ready' as const, transferred_voice_id: null, check_id: checkId };
    }
    const transferred =
      decision === 'transfer' ? await enrollClaimant(tx, runtime, this.deps.spokenConsent, dispute, principal, now) : null;
    await closeDispute(tx, voice.id, transferred ? 'transferred' : 'rejected', now, transferred?.voiceId ?? null);
    await tellOwner('voice.review_rejected');
    await record(transferred ? 'transferred' : 'rejected');
    await eraseVoice(tx, runtime, voice, principal, now);
    return transferred
      ? { status: 'transferred' as const, transferred_voice_id: transferred.voiceId, check_id: checkId }
      : { status: 'rejected' as const, transferred_voice_id: null, check_id: checkId };
  }
}

/**
 * A cleared voice: `ready` again, its hold gone, and published so that a voice held with consent and
 * licences (a re-enrollment, a disputed voice) gets them back at the edge.
 */
async function releaseHold(tx: Executor, voiceId: string, now: Date): Promise<void> {
  await store.setVoiceStatus(tx, voiceId, 'ready', now);
  await store.deleteReview(tx, voiceId);
  await publishToEdgeIndex(tx, voiceId, now);
}

/**
 * An event for each owner about their own voice (`role` says which side it is on) and an audit
 * record on each voice; answers the held voice's record's check id. Neither names the other owner's voice or account. When a voice is held, the
 * record on the matched voice is the service's (`system`), not the enrolling caller's: an owner also
 * reads the entries they caused, and must not learn the matched voice's id from it.
 */
async function tellBothOwners(
  tx: Executor,
  runtime: Runtime,
  stage: ReviewStage,
  held: Party,
  matched: Party | null,
  actor: Principal,
  now: Date,
): Promise<string> {
  const sides = [
    { party: held, role: 'held_voice' as const, caller: actor.userId },
    ...(matched ? [{ party: matched, role: 'matched_voice' as const, caller: stage === 'held' ? null : actor.userId }] : []),
  ];
  for (const { party, role } of sides) {
    await recordEvent(tx, { type: EVENT_OF[stage], voiceId: party.voiceId, ownerId: party.ownerId, fields: { role } }, now);
  }
  const records = sides.map(({ party, caller }) =>
    buildAuditRecord('voice.review', {
      check_id: runtime.newId(),
      decided_at: now,
      voice_id: party.voiceId,
      action: stage,
      reason: 'identity_review',
      ...auditCaller(caller === null ? { type: 'system' } : { type: 'user', userId: caller }),
    }),
  );
  await queueAuditRecords(tx, records, now);
  return records[0]!.check_id;
}
