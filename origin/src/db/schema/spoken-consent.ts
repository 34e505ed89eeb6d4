import { sql } from 'drizzle-orm';
import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './auth.js';
import { bytes } from './bytes.js';
import { voices } from './voices.js';

/**
 * A spoken-consent challenge (docs/DECISIONS.md#spoken-consent): the statement version and the
 * random phrase an owner must read, single use (`used_at`), expiring at `expires_at`.
 */
export const consentChallenges = pgTable(
  'consent_challenges',
  {
    id: uuid('id').primaryKey(),
    ownerId: uuid('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    statementVersion: text('statement_version').notNull(),
    language: text('language').notNull(),
    phrase: text('phrase').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().default(sql`now()`),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (table) => [index('consent_challenges_owner_idx').on(table.ownerId)],
);

/**
 * The recording of a voice's spoken consent, kept with its biometric data: origin only, never in a
 * response other than the owner's download, erased with the voice (ON DELETE CASCADE). A
 * re-enrollment replaces it. What the checks found is in the voice's biometric consent record.
 */
export const spokenConsentRecordings = pgTable('spoken_consent_recordings', {
  voiceId: uuid('voice_id')
    .primaryKey()
    .references(() => voices.id, { onDelete: 'cascade' }),
  audio: bytes('audio').notNull(),
  filename: text('filename').notNull(),
  sha256: text('sha256').notNull(),
  recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull(),
});

export type ChallengeRow = typeof consentChallenges.$inferSelect;
