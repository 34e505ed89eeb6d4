import {
  AUDIO_PROBLEM_CODES,
  enrollFieldsSchema,
  type listVoicesQuerySchema,
  ProblemError,
  qualityWarnings,
  validationProblem,
} from '@vip/shared-schema';
import type { z } from 'zod';
import { queueAuditRecords } from '../audit/queue.js';
import type { Principal } from '../auth/guard.js';
import { usableConsent } from '../consents/service.js';
import * as consents from '../consents/store.js';
import type { Database, Executor } from '../db/client.js';
import type { OutboxSignal } from '../edge-sync/signal.js';
import { recordEvent } from '../events/store.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import type { MultipartForm, UploadedFile } from '../http/multipart-form.js';
import type { Runtime } from '../runtime.js';
import { lockVoiceFor } from '../voice-index/access.js';
import { publishVoiceIndex } from '../voice-index/publish.js';
import type { EmbedFileResult, EnrollmentResult, VoiceprintEngine } from '../voiceprint/index.js';
import { voiceAuditRecord } from './audit-records.js';
import { eraseVoice } from './erase.js';
import { holdForReview } from './reviews.js';
import * as store from './store.js';

export interface VoiceServiceDeps {
  db: Database;
  runtime: Runtime;
  outbox: OutboxSignal;
  /** Absent in processes that serve no audio (tests of other domains): enroll and compare answer 503. */
  engine?: VoiceprintEngine;
}

/** Engine answers that mean "this audio cannot make a voiceprint": the attempt is reported as `enrollment.failed`. */
const FAILED_ENROLLMENT_CODES = new Set<string>(AUDIO_PROBLEM_CODES);

type EnrollOutcome = { kind: 'enrolled'; voice: store.VoiceRow } | { kind: 'conflict' };

export class VoiceService {
  constructor(private readonly deps: VoiceServiceDeps) {}

  async enroll(principal: Principal, form: MultipartForm) {
    const { db, runtime } = this.deps;
    const engine = this.deps.engine;
    if (!engine) throw new ProblemError('unavailable', 'This process has no voiceprint engine.');
    const parsed = enrollFieldsSchema.safeParse(Object.fromEntries(form.fields));
    if (!parsed.success) throw validationProblem(parsed.error.issues, 'body');
    const files = form.files.get('audio') ?? [];
    if (files.length === 0) {
      throw new ProblemError('validation_failed', 'The multipart form is invalid.', {
        errors: [{ field: 'body.audio', message: 'at least one audio file is required' }],
      });
    }
    const { name, consent_id: consentId } = parsed.data;
    // Checked before the audio is processed, and again under lock when the voice is stored.
    usableConsent(await consents.findConsent(db, consentId), principal.userId);

    const enrollment = await this.embedForEnrollment(engine, principal.userId, name, files);
    // Both points target a false-positive identification rate per search at the design registry
    // size (operating-points.ts): refused above `strict`, held for an administrator from `review`.
    const conflictPoints = engine.points(enrollment.model).enrollment_vs_enrollment;
    const quality = summarizeQuality(enrollment.files, files);
    const now = runtime.clock.now();
    const outcome = await db.transaction(async (tx): Promise<EnrollOutcome> => {
      await store.serializeEnrollments(tx, enrollment.model);
      usableConsent(await consents.lockConsent(tx, consentId), principal.userId);
      const nearest = await store.nearestVoice(tx, enrollment, principal.userId);
      if (nearest && nearest.similarity >= conflictPoints.strict) {
        await recordEnrollmentFailure(tx, principal.userId, name, 'identity_conflict', now);
        // The protected owner finds the refused attempt in the audit log of their voice.
        await queueAuditRecords(
          tx,
          [voiceAuditRecord('enrollment.refused', nearest.voiceId, principal, now, runtime.newId(), 'identity_conflict')],
          now,
        );
        return { kind: 'conflict' };
      }
      const match = nearest && nearest.similarity >= conflictPoints.review ? nearest : null;
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
      await consents.attachConsentToVoice(tx, consentId, voice.id);
      await recordEvent(
        tx,
        {
          type: 'enrollment.complete',
          voiceId: voice.id,
          ownerId: principal.userId,
          fields: { name, model: enrollment.model, status: voice.status },
        },
        now,
      );
      // Enrollments are decisions like refusals: the owner's audit log holds both.
      const held = match ? 'pending_review' : null;
      await queueAuditRecords(tx, [voiceAuditRecord('enrollment.completed', voice.id, principal, now, runtime.newId(), held)], now);
      if (match) await holdForReview(tx, runtime, voice, match, principal, now);
      // The gate now answers blocked/no_consent for this voice instead of no_registry_record; a held
      // voice keeps answering so, since it can get neither consent nor licences until cleared.
      await publishVoiceIndex(tx, voice.id, now);
      return { kind: 'enrolled', voice };
    });
    if (outcome.kind === 'conflict') {
      throw new ProblemError('identity_conflict', 'This voice is already enrolled by another owner.');
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

  async list(principal: Principal, query: z.output<typeof listVoicesQuerySchema>) {
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    // One row more than asked tells whether another page exists.
    const rows = await store.listVoicesOfOwner(this.deps.db, principal.userId, query.limit + 1, after);
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      voices: page.map((voice) => ({
        voice_id: voice.id,
        name: voice.name,
        status: voice.status,
        consent_status: voice.consentStatus,
        created_at: voice.createdAt.toISOString(),
        model: voice.model,
        speech_seconds: voice.speechSeconds,
      })),
      next_cursor: rows.length > query.limit && last ? encodeCursor({ at: last.createdAt, id: last.id }) : null,
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

/** The quality report: each file's measurements under the name it was uploaded as, and the worst of them. */
function summarizeQuality(results: readonly EmbedFileResult[], uploads: readonly UploadedFile[]) {
  const perFile = results.map((result, index) => ({ filename: uploads[index]!.filename, ...result.quality }));
  const clippingRatio = Math.max(...perFile.map((quality) => quality.clipping_ratio));
  const snrDb = Math.min(...perFile.map((quality) => quality.snr_db));
  return {
    files: perFile,
    clipping_ratio: clippingRatio,
    snr_db: snrDb,
    warnings: qualityWarnings({ clipping_ratio: clippingRatio, snr_db: snrDb }),
  };
}
