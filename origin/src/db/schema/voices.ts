import { CONSENT_STATUSES, VOICE_STATUSES } from '@vip/shared-schema';
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, real, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './auth.js';

/**
 * An enrolled voice identity. Biometric data (embeddings) lives in its own table, owned by the
 * voiceprint domain; this row is what consent, licences and the edge index refer to.
 */
export const voices = pgTable(
  'voices',
  {
    id: uuid('id').primaryKey(),
    ownerId: uuid('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** `pending_review`: held by the identity-conflict review band until an administrator decides (voice_reviews). */
    status: text('status', { enum: VOICE_STATUSES }).notNull(),
    /** Synthesis consent (docs/CONTRACT.md#answers-to-the-specifications-gaps): `unknown` until the owner grants it. */
    consentStatus: text('consent_status', { enum: CONSENT_STATUSES }).notNull().default('unknown'),
    model: text('model').notNull(),
    speechSeconds: real('speech_seconds').notNull(),
    quality: jsonb('quality').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().default(sql`now()`),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().default(sql`now()`),
  },
  (table) => [index('voices_owner_idx').on(table.ownerId, table.createdAt)],
);

/** A voice's row: the one declaration every store and service uses. */
export type VoiceRow = typeof voices.$inferSelect;

/**
 * Why a voice is held (status `pending_review`): the other owner's voice it resembles and how much.
 * The row goes when an administrator decides (clear deletes it; reject erases the voice, and the row
 * with it). The matched voice may be erased meanwhile: its owner is then no longer a party.
 */
export const voiceReviews = pgTable(
  'voice_reviews',
  {
    voiceId: uuid('voice_id')
      .primaryKey()
      .references(() => voices.id, { onDelete: 'cascade' }),
    matchedVoiceId: uuid('matched_voice_id').references(() => voices.id, { onDelete: 'set null' }),
    similarity: real('similarity').notNull(),
    heldAt: timestamp('held_at', { withTimezone: true }).notNull(),
  },
  (table) => [index('voice_reviews_held_idx').on(table.heldAt, table.voiceId)],
);
