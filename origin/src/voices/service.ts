import { AUDIO_PROBLEM_CODES, type listVoicesQuerySchema, ProblemError, type RecordingMeasurements } from '@vip/shared-schema';
import type { z } from 'zod';
import { queueAuditRecords } from '../audit/index.js';
import type { Principal } from '../auth/index.js';
import { attachConsentToVoice, consentRequired, findConsent, lockConsent, usableConsent } from '../biometric-consent/index.js';
import type { Database, Executor } from '../db/client.js';
import type { VoiceRow } from '../db/schema.js';
import { recordEvent } from '../events/index.js';
import { decodeCursor, encodeCursor, keysetPage } from '../http/cursor.js';
import type { MultipartForm, UploadedFile } from '../http/multipart-form.js';
import type { WakeSignal } from '../loops/wake-signal.js';
import { findVoiceFor, lockVoiceFor, publishToEdgeIndex, refuseWhileHeld } from '../registry/index.js';
import type { Runtime } from '../runtime.js';
import type { SpokenConsentService, VerifiedConsent } from '../spoken-consent/index.js';
import * as store from '../voice-records/store.js';
import type { EnrollmentResult, VoiceprintEngine } from '../voiceprint/index.js';
import { voiceAuditRecord } from './audit-records.js';
import { eraseVoice } from './erase.js';
import { holdForReview } from './reviews.js';
import { audioFilesOf, enrollmentFormOf, summarizeQuality } from './uploads.js';

export interface VoiceServiceDeps {
  db: Database;
  runtime: Runtime;
  outbox: WakeSignal;
  /** Absent in processes that serve no audio (tests of other domains): enroll and compare answer 503. */
  engine?: VoiceprintEngine;
  spokenConsent: SpokenConsentService;
}

/** Engine answers that mean "this audio cannot make a voiceprint": the attempt is reported as `enrollment.failed`. */
const FAILED_ENROLLMENT_CODES = new Set<string>(AUDIO_PROBLEM_CODES);

type EnrollOutcome = { kind: 'enrolled'; voice: VoiceRow } | { kind: 'conflict' };

export class VoiceService {
  constructor(private readonly deps: VoiceServiceDeps) {}

  async enroll(principal: Principal, form: MultipartForm) {
    const { db, runtime } = this.deps;
    const engine = this.engineOrUnavailable();
    // Enrolling without any consent is a step skipped, not a malformed field: the answer says which step.
    if (!form.fields.has('consent_id')) throw consentRequired('An enrollment needs a biometric consent_id.');
    const { name, consentId, files } = enrollmentFormOf(form);
    // Checked before the audio is processed, and again under lock when the voice is stored.
    usableConsent(await findConsent(db, consentId), principal.userId);
    const spoken = await this.deps.spokenConsent.submissionOf(principal, form);

    const enrollment = await this.embedForEnrollment(engine, principal.userId, name, files);
    const verified = spoken && (await this.deps.spokenConsent.verify(principal, spoken, enrollment, engine));
    const quality = summarizeQuality(enrollment.files, files);
    const now = runtime.clock.now();
    const outcome = await db.transaction(async (tx): Promise<EnrollOutcome> => {
      await store.serializeEnrollments(tx, enrollment.model);
      usableConsent(await lockConsent(tx, consentId), principal.userId);
      const match = await this.searchForConflict(tx, engine, enrollment, principal, principal.userId, name, now);
      if (match === 'refused') return { kind: 'conflict' };
      const voice = await store.insertVoice(tx, {
        id: runtime.newId(),
        ownerId: principal.userId,
        name,
        status: match ? 'pending_review' : 'ready',
        model: enrollment.model,
        speechSeconds: enrollment.speechSeconds,
        quality,
        createdAt: now,
        updatedAt: now,
      });
      await store.insertEmbedding(tx, {
        voiceId: voice.id,
        ownerId: principal.userId,
        model: enrollment.model,
        embedding: enrollment.embedding,
      });
      await attachConsentToVoice(tx, consentId, voice.id);
      await this.recordSpokenConsent(tx, verified, voice.id, principal, now);
      await this.completeEnrollment(tx, voice, match, principal, now);
      return { kind: 'enrolled', voice };
    });
    return this.answerEnrollment(outcome, quality);
  }

  /**
   * Measures recordings as enrollment does (the engine's decoder and voice-activity detector), so a
   * page can tell an owner how much speech a take holds. The engine makes an embedding on the way;
   * it is dropped here, never stored or answered, and nothing is recorded about the call.
   */
  async measure(form: MultipartForm): Promise<RecordingMeasurements> {
    const engine = this.engineOrUnavailable();
    const files = audioFilesOf(form);
    const results = await Promise.all(files.map((file) => engine.embedFile(file.bytes)));
    const speechSeconds = results.reduce((sum, result) => sum + result.speechSeconds, 0);
    return { files: summarizeQuality(results, files).files, speech_seconds: speechSeconds };
  }

  /**
   * A new voiceprint for an enrolled voice, under the model the service runs now (docs/OPERATIONS.md#upgrading-the-speaker-model).
   * The voice keeps its id, its biometric consent (which already covers this voice), its synthesis
   * consent and its licences; the new voiceprint goes through the same 1:N identity search as an
   * enrollment, against every other owner's voice.
   */
  async reenroll(principal: Principal, voiceId: string, form: MultipartForm) {
    const { db, runtime } = this.deps;
    const engine = this.engineOrUnavailable();
    const files = audioFilesOf(form);
    // Checked before the audio is processed, and again under lock when the voiceprint is replaced.
    const before = await findVoiceFor(db, principal, voiceId);
    refuseWhileHeld(before, 'a new voiceprint');
    const spoken = await this.deps.spokenConsent.submissionOf(principal, form);

    const enrollment = await this.embedForEnrollment(engine, before.ownerId, before.name, files);
    const verified = spoken && (await this.deps.spokenConsent.verify(principal, spoken, enrollment, engine));
    const quality = summarizeQuality(enrollment.files, files);
    const now = runtime.clock.now();
    const outcome = await db.transaction(async (tx): Promise<EnrollOutcome> => {
      await store.serializeEnrollments(tx, enrollment.model);
      const voice = await lockVoiceFor(tx, principal, voiceId);
      refuseWhileHeld(voice, 'a new voiceprint');
      const match = await this.searchForConflict(tx, engine, enrollment, principal, voice.ownerId, voice.name, now);
      if (match === 'refused') return { kind: 'conflict' };
      const replaced = await store.replaceVoiceprint(tx, voice.id, {
        status: match ? 'pending_review' : 'ready',
        model: enrollment.model,
        embedding: enrollment.embedding,
        speechSeconds: enrollment.speechSeconds,
        quality,
        updatedAt: now,
      });
      await this.recordSpokenConsent(tx, verified, replaced.id, principal, now);
      await this.completeEnrollment(tx, replaced, match, principal, now);
      return { kind: 'enrolled', voice: replaced };
    });
    return this.answerEnrollment(outcome, quality);
  }

  async list(principal: Principal, query: z.output<typeof listVoicesQuerySchema>) {
    const after = decodeCursor(query.cursor);
    const { rows, nextCursor } = await keysetPage(
      query.limit,
      (rowsWanted) => store.listVoicesOfOwner(this.deps.db, principal.userId, rowsWanted, after),
      (last) => encodeCursor({ at: last.createdAt, id: last.id }),
    );
    return {
      voices: rows.map((voice) => ({
        voice_id: voice.id,
        name: voice.name,
        status: voice.status,
        consent_status: voice.consentStatus,
        created_at: voice.createdAt.toISOString(),
        model: voice.model,
        // A process without an engine runs no 1:N search, so no voiceprint of it is out of date.
        voiceprint_current: this.deps.engine ? voice.model === this.deps.engine.model.name : true,
        speech_seconds: voice.speechSeconds,
      })),
      next_cursor: nextCursor,
    };
  }

  /** Erases every row of the voice in one commit, the edge index record included; the audit chain keeps its entries. */
  async delete(principal: Principal, voiceId: string) {
    const { db, runtime } = this.deps;
    const now = runtime.clock.now();
    const erased = await db.transaction(async (tx) => eraseVoice(tx, runtime, await lockVoiceFor(tx, principal, voiceId), principal, now));
    this.deps.outbox.nudge();
    return { voice_id: voiceId, deleted: true as const, erased };
  }

  private engineOrUnavailable(): VoiceprintEngine {
    if (!this.deps.engine) throw new ProblemError('unavailable', 'This process has no voiceprint engine.');
    return this.deps.engine;
  }

  /**
   * The 1:N identity search, under the enrollment lock, over every voice not owned by `ownerId`.
   * Both points target a false-positive identification rate per search at the design registry size
   * (operating-points.ts): `refused` above `strict` (the attempt is reported to its owner, and audited
   * on the matched voice, whose owner finds it there), the matched voice from `review`, else null.
   */
  private async searchForConflict(
    tx: Executor,
    engine: VoiceprintEngine,
    enrollment: EnrollmentResult,
    principal: Principal,
    ownerId: string,
    name: string,
    now: Date,
  ): Promise<store.NearVoice | 'refused' | null> {
    const points = engine.points(enrollment.model).enrollment_vs_enrollment;
    const nearest = await store.nearestVoice(tx, enrollment, ownerId);
    if (nearest && nearest.similarity >= points.strict) {
      await recordEnrollmentFailure(tx, ownerId, name, 'identity_conflict', now);
      await queueAuditRecords(
        tx,
        [voiceAuditRecord('enrollment.refused', nearest.voiceId, principal, now, this.deps.runtime.newId(), 'identity_conflict')],
        now,
      );
      return 'refused';
    }
    return nearest && nearest.similarity >= points.review ? nearest : null;
  }

  private async recordSpokenConsent(tx: Executor, verified: VerifiedConsent | null, voiceId: string, principal: Principal, now: Date) {
    if (verified) await this.deps.spokenConsent.record(tx, verified, voiceId, principal, now);
  }

  /** What every stored voiceprint is followed by, in its transaction. */
  private async completeEnrollment(tx: Executor, voice: VoiceRow, match: store.NearVoice | null, principal: Principal, now: Date) {
    await recordEvent(
      tx,
      {
        type: 'enrollment.complete',
        voiceId: voice.id,
        ownerId: voice.ownerId,
        fields: { name: voice.name, model: voice.model, status: voice.status },
      },
      now,
    );
    // Enrollments are decisions like refusals: the owner's audit log holds both.
    const held = match ? 'pending_review' : null;
    await queueAuditRecords(tx, [voiceAuditRecord('enrollment.completed', voice.id, principal, now, this.deps.runtime.newId(), held)], now);
    if (match) await holdForReview(tx, this.deps.runtime, voice, match, principal, now);
    // A new voice now answers blocked/no_consent at the gate instead of no_registry_record; a held
    // voice is published as granting nothing until it is cleared (edge-index/publish.ts).
    await publishToEdgeIndex(tx, voice.id, now);
  }

  private answerEnrollment(outcome: EnrollOutcome, quality: ReturnType<typeof summarizeQuality>) {
    if (outcome.kind === 'conflict') {
      throw new ProblemError(
        'identity_conflict',
        'This voice is already enrolled by another owner. If it is your voice, dispute that enrollment: ask for a challenge (POST /api/v1/consents/challenges), read its statement and phrase in your voice, and send the recording with these recordings, a name and a biometric consent to POST /api/v1/voices/disputes. The voice is then held, granting nothing, until an administrator decides; its owner is told (docs/OWNER-GUIDE.md#if-your-voice-is-enrolled-by-someone-else).',
      );
    }
    this.deps.outbox.nudge();
    const { voice } = outcome;
    return {
      voice_id: voice.id,
      name: voice.name,
      status: voice.status,
      speech_seconds: voice.speechSeconds,
      quality,
      model: voice.model,
    };
  }

  /** Audio that cannot make a voiceprint is refused as the engine says, and the attempt is reported. */
  private async embedForEnrollment(
    engine: VoiceprintEngine,
    ownerId: string,
    name: string,
    files: readonly UploadedFile[],
  ): Promise<EnrollmentResult> {
    try {
      return await engine.embedMany(
        files.map((file) => file.bytes),
        files.map((file) => file.filename),
      );
    } catch (error) {
      if (!(error instanceof ProblemError) || !FAILED_ENROLLMENT_CODES.has(error.code)) throw error;
      const { db, runtime } = this.deps;
      await recordEnrollmentFailure(db, ownerId, name, error.code, runtime.clock.now());
      if (error.code === 'no_speech') throw new ProblemError('no_speech', `${error.message} Detected speech: 0.0 s.`);
      throw error;
    }
  }
}

/** No voice exists for a failed attempt: the event names only its owner, and never another owner's voice. */
function recordEnrollmentFailure(db: Executor, ownerId: string, name: string, reason: string, now: Date) {
  return recordEvent(db, { type: 'enrollment.failed', voiceId: null, ownerId, fields: { name, reason } }, now);
}
