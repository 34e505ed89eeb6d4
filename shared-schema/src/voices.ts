import { z } from 'zod';
import { cursor, isoTimestamp, uuid } from './common.js';
import { CONSENT_STATUSES, DISPUTE_STATUSES, REVIEW_DECISIONS, REVIEW_REASONS, VOICE_STATUSES } from './enums.js';
import { spokenConsentEvidenceSchema } from './spoken-consent.js';

/** Enrollment, the voice list and erasure (biometric consent: biometric-consent.ts; docs/CONTRACT.md#answers-to-the-specifications-gaps, docs/CONTRACT.md#contract-details). */

export const VOICE_NAME_MAX_LENGTH = 100;

/** The text fields of the multipart enrollment form, after the files have been taken out. */
export const enrollFieldsSchema = z.strictObject({
  name: z.string().trim().min(1).max(VOICE_NAME_MAX_LENGTH),
  consent_id: uuid,
});

/** Per-file recording quality as the engine measures it. */
export const audioQualitySchema = z
  .object({
    duration_seconds: z.number(),
    speech_seconds: z.number(),
    clipping_ratio: z.number().describe('share of samples at full scale; above ~0.01 is audibly distorted'),
    snr_db: z.number().describe('speech power over the power of the pauses, in dB'),
  })
  .meta({ id: 'AudioQuality' });

export const QUALITY_WARNINGS = ['clipping', 'noisy'] as const;
export type QualityWarning = (typeof QUALITY_WARNINGS)[number];

/**
 * What a recording's quality warns about: above 1% of full-scale samples it is audibly distorted;
 * below 10 dB of speech over pause power the background competes with the voice. Warnings only:
 * the voiceprint is still made. Applied to the worst file of an enrollment and, by the console, to each file.
 */
export function qualityWarnings(quality: { clipping_ratio: number; snr_db: number }): QualityWarning[] {
  const warnings: QualityWarning[] = [];
  if (quality.clipping_ratio > 0.01) warnings.push('clipping');
  if (quality.snr_db < 10) warnings.push('noisy');
  return warnings;
}

/** One uploaded file's quality under the name it was uploaded as (problems about a file name it the same way). */
const fileQualitySchema = audioQualitySchema
  .extend({ filename: z.string().describe('the name the file was uploaded under (last path segment; `audio N` when none was sent)') })
  .meta({ id: 'EnrollmentFileQuality' });

export const enrollmentQualitySchema = z
  .object({
    /** In upload order. */
    files: z.array(fileQualitySchema),
    clipping_ratio: z.number().describe('worst file'),
    snr_db: z.number().describe('worst file'),
    warnings: z.array(z.enum(QUALITY_WARNINGS)),
  })
  .meta({ id: 'EnrollmentQuality' });
export type EnrollmentQuality = z.infer<typeof enrollmentQualitySchema>;

/**
 * What `POST /api/v1/voices/measure` answers: each recording measured as enrollment measures it (the
 * same decoder and voice-activity detector), so a page can say how much speech a take holds before
 * the owner enrolls. Nothing of the audio is kept.
 */
export const recordingMeasurementsSchema = z
  .object({
    files: z.array(fileQualitySchema).describe('in upload order'),
    speech_seconds: z.number().describe('all files together, as enrollment would count them'),
  })
  .meta({ id: 'RecordingMeasurements' });
export type RecordingMeasurements = z.infer<typeof recordingMeasurementsSchema>;

export const enrolledVoiceSchema = z
  .object({
    voice_id: uuid,
    name: z.string(),
    status: z.enum(VOICE_STATUSES),
    speech_seconds: z.number(),
    quality: enrollmentQualitySchema,
    model: z.string(),
  })
  .meta({ id: 'EnrolledVoice' });

export const voiceSummarySchema = z
  .object({
    voice_id: uuid,
    name: z.string(),
    status: z.enum(VOICE_STATUSES),
    consent_status: z.enum(CONSENT_STATUSES),
    created_at: isoTimestamp,
    model: z.string(),
    voiceprint_current: z
      .boolean()
      .describe(
        'false when the voice was enrolled under another model than the one the service runs: detection, screening and identity-conflict searches do not find it until it is re-enrolled (POST /api/v1/voices/{voice_id}/re-enroll)',
      ),
    speech_seconds: z.number(),
  })
  .meta({ id: 'VoiceSummary' });

export const VOICE_LIST_MAX_LIMIT = 100;

export const listVoicesQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(VOICE_LIST_MAX_LIMIT).default(50),
  cursor: cursor.optional(),
});

export const voiceListSchema = z
  .object({ voices: z.array(voiceSummarySchema), next_cursor: z.string().nullable() })
  .meta({ id: 'VoiceList' });

export const voiceParamsSchema = z.strictObject({ voice_id: uuid });

export const deletedVoiceSchema = z
  .object({
    voice_id: uuid,
    deleted: z.literal(true),
    erased: z.object({
      embeddings: z.number().int().describe('voiceprint rows removed'),
      licenses: z.number().int().describe('licences removed, whatever their state'),
      consents: z.number().int().describe('biometric consent records removed'),
      edge_index: z.boolean().describe('a deletion of the edge index record was queued in the same commit'),
    }),
  })
  .meta({ id: 'DeletedVoice' });

/**
 * Voices held for review (docs/ARCHITECTURE.md#voiceprints, docs/CONTRACT.md#closing-the-loop-receipts-pages): an enrollment whose voiceprint resembles another
 * owner's between the review and the strict identity-conflict points, or a voice someone disputes
 * (docs/DECISIONS.md#voice-disputes), waits for an administrator.
 */
export const decideVoiceReviewRequestSchema = z
  .strictObject({
    decision: z
      .enum(REVIEW_DECISIONS)
      .describe(
        "`clear`: the voice becomes `ready`; `reject`: it is erased as DELETE erases it; `transfer` (a disputed voice only): it is erased and the claimant's voiceprint becomes a voice of the claimant's",
      ),
  })
  .meta({ id: 'VoiceReviewDecision' });

export const voiceReviewOutcomeSchema = z
  .object({
    voice_id: uuid,
    status: z.enum(['ready', 'rejected', 'transferred']).describe('`rejected` and `transferred`: the held voice no longer exists'),
    transferred_voice_id: uuid.nullable().describe("the claimant's new voice, when the decision was `transfer`"),
    check_id: uuid.describe(
      'the audit entry of the decision on the held voice; its receipt: GET /api/v1/protect/audit-log/{check_id}/receipt',
    ),
  })
  .meta({ id: 'VoiceReviewOutcome' });

/** What an administrator reads of a dispute: who claims the voice, and the spoken consent they gave. */
const reviewedDisputeSchema = z
  .object({
    dispute_id: uuid,
    claimant_id: uuid.describe('the account that claims the voice is theirs'),
    opened_at: isoTimestamp,
    spoken_consent: spokenConsentEvidenceSchema.describe("the checks the claimant's spoken consent passed, read in the disputed voice"),
  })
  .meta({ id: 'ReviewedDispute' });

export const voiceReviewSchema = z
  .object({
    voice_id: uuid.describe('the held voice'),
    owner_id: uuid.describe('who enrolled it'),
    name: z.string(),
    model: z.string(),
    speech_seconds: z.number(),
    held_at: isoTimestamp,
    reason: z
      .enum(REVIEW_REASONS)
      .describe("`identity_conflict`: its enrollment resembles another owner's voice; `dispute`: someone claims it"),
    matched_voice_id: uuid.nullable().describe("the other owner's voice it resembles; null once that voice was erased, and for a dispute"),
    matched_owner_id: uuid.nullable(),
    similarity: z
      .number()
      .describe("cosine similarity of the two voiceprints (for a dispute: the claimant's recordings and the held voice) when it was held"),
    dispute: reviewedDisputeSchema.nullable().describe('the dispute, when `reason` is `dispute`'),
  })
  .meta({ id: 'VoiceReview' });

/** Pages like the voice list. */
export const listVoiceReviewsQuerySchema = listVoicesQuerySchema;

export const voiceReviewListSchema = z
  .object({ reviews: z.array(voiceReviewSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'VoiceReviewList' });

/**
 * A voice dispute as its claimant sees it (docs/DECISIONS.md#voice-disputes): never the disputed
 * voice's id or owner, which are another account's.
 */
export const voiceDisputeSchema = z
  .object({
    dispute_id: uuid,
    status: z.enum(DISPUTE_STATUSES),
    name: z.string().describe('the name the voice gets if it is transferred to you'),
    opened_at: isoTimestamp,
    decided_at: isoTimestamp.nullable(),
    voice_id: uuid.nullable().describe('your voice, made from the recordings of the dispute, once it was transferred to you'),
    check_id: uuid.describe(
      'the audit entry of the opening; its receipt (GET /api/v1/protect/audit-log/{check_id}/receipt) shows when it was filed',
    ),
  })
  .meta({ id: 'VoiceDispute' });

export const listVoiceDisputesQuerySchema = listVoicesQuerySchema;

export const voiceDisputeListSchema = z
  .object({ disputes: z.array(voiceDisputeSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'VoiceDisputeList' });
