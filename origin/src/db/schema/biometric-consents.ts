import type { SpokenConsentEvidence } from '@vip/shared-schema';
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './auth.js';
import { voices } from './voices.js';

/**
 * Biometric consent (docs/CONTRACT.md#answers-to-the-specifications-gaps, "consent endpoint"): the owner's agreement to have a
 * voiceprint made. Not the per-voice synthesis consent, which is `voices.consent_status`.
 * One consent serves one enrollment: `voice_id` is set when it is used, and erasing the voice
 * erases its consent with it.
 */
export const biometricConsents = pgTable(
  'biometric_consents',
  {
    id: uuid('id').primaryKey(),
    ownerId: uuid('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    type: text('type', { enum: ['biometric'] }).notNull(),
    statementVersion: text('statement_version').notNull(),
    grantedAt: timestamp('granted_at', { withTimezone: true }).notNull().default(sql`now()`),
    voiceId: uuid('voice_id')
      .unique()
      .references(() => voices.id, { onDelete: 'cascade' }),
    /** What the spoken-consent checks found (SpokenConsentEvidence in shared-schema); null for a voice enrolled before them. */
    spokenEvidence: jsonb('spoken_evidence').$type<SpokenConsentEvidence>(),
  },
  (table) => [index('biometric_consents_owner_idx').on(table.ownerId)],
);

export type ConsentRow = typeof biometricConsents.$inferSelect;
