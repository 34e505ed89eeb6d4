import { CONSENT_STATUSES } from '@vip/shared-schema';
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, real, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './identity.js';

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
    status: text('status', { enum: ['ready'] }).notNull(),
    /** Synthesis consent (DESIGN section 6): `unknown` until the owner grants it. */
    consentStatus: text('consent_status', { enum: CONSENT_STATUSES }).notNull().default('unknown'),
    model: text('model').notNull(),
    speechSeconds: real('speech_seconds').notNull(),
    quality: jsonb('quality').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().default(sql`now()`),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().default(sql`now()`),
  },
  (table) => [index('voices_owner_idx').on(table.ownerId, table.createdAt)],
);
