import { DISPUTE_STATUSES, type EnrollmentQuality, type SpokenConsentEvidence } from '@vip/shared-schema';
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, real, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './auth.js';
import { bytes } from './bytes.js';
import { untypedVector } from './embeddings.js';
import { voices } from './voices.js';

/**
 * A claim that a voice another account enrolled is the claimant's (docs/DECISIONS.md#voice-disputes):
 * the claimant's voiceprint and spoken consent, which passed an enrollment's checks, and where the
 * administrators' decision stands. The voiceprint, its summary and the recording are biometric data:
 * origin only, never answered, erased when the dispute is decided (a transfer moves them to the
 * claimant's new voice). At most one dispute of a voice is open at a time.
 */
export const voiceDisputes = pgTable(
  'voice_disputes',
  {
    id: uuid('id').primaryKey(),
    claimantId: uuid('claimant_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** Null once the disputed voice is erased, by a decision or by its owner. */
    voiceId: uuid('voice_id').references(() => voices.id, { onDelete: 'set null' }),
    status: text('status', { enum: DISPUTE_STATUSES }).notNull(),
    /** The claimant's voice if it is transferred: its name and the biometric consent it would carry. */
    name: text('name').notNull(),
    consentId: uuid('consent_id').notNull(),
    /** Cosine similarity of the claimant's voiceprint and the disputed voice's when it was opened. */
    similarity: real('similarity').notNull(),
    model: text('model').notNull(),
    embedding: untypedVector('embedding'),
    speechSeconds: real('speech_seconds').notNull(),
    quality: jsonb('quality').$type<EnrollmentQuality>().notNull(),
    spokenEvidence: jsonb('spoken_evidence').$type<SpokenConsentEvidence>().notNull(),
    recording: bytes('recording'),
    recordingFilename: text('recording_filename'),
    /** The audit entry of the opening, the claimant's receipt. */
    checkId: uuid('check_id').notNull(),
    transferredVoiceId: uuid('transferred_voice_id').references(() => voices.id, { onDelete: 'set null' }),
    openedAt: timestamp('opened_at', { withTimezone: true }).notNull().default(sql`now()`),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
  },
  (table) => [
    index('voice_disputes_claimant_idx').on(table.claimantId, table.openedAt),
    uniqueIndex('voice_disputes_open_voice_idx').on(table.voiceId).where(sql`${table.status} = 'open'`),
  ],
);

export type VoiceDisputeRow = typeof voiceDisputes.$inferSelect;
