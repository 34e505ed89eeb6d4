import { type IntendedUse, LICENSE_DESCRIPTION_SOURCES, LICENSE_REPRESENTATIONS, LICENSE_STATES } from '@vip/shared-schema';
import { sql } from 'drizzle-orm';
import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { voices } from './voices.js';

/**
 * A licence a voice owner grants one platform for some intended uses until a date. The token
 * (`vlt_…`) is shown once at creation; only its SHA-256 is kept, and published to the edge so a
 * gate call's `license_token` can be matched without the edge ever holding the token.
 */
export const licenses = pgTable(
  'licenses',
  {
    id: uuid('id').primaryKey(),
    voiceId: uuid('voice_id')
      .notNull()
      .references(() => voices.id, { onDelete: 'cascade' }),
    /** The platform's registered name, exactly as the gate compares it with a call's `platform_name`. */
    platformName: text('platform_name').notNull(),
    scopes: text('scopes').array().notNull().$type<IntendedUse[]>(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** The terms (shared-schema/src/license-terms.ts): as stated, or for older rows written from the scopes by migration 0018. */
    description: text('description').notNull(),
    descriptionSource: text('description_source', { enum: LICENSE_DESCRIPTION_SOURCES }).notNull().default('stated'),
    representedBy: text('represented_by', { enum: LICENSE_REPRESENTATIONS }).notNull().default('none'),
    compensation: text('compensation'),
    status: text('status', { enum: LICENSE_STATES }).notNull().default('active'),
    tokenHash: text('token_hash').notNull().unique(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().default(sql`now()`),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().default(sql`now()`),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (table) => [
    index('licenses_voice_idx').on(table.voiceId, table.createdAt),
    // The expiry job's scan: active licences by the time they run out.
    index('licenses_active_expiry_idx').on(table.expiresAt).where(sql`${table.status} = 'active'`),
  ],
);

/** A licence's row: the one declaration every store and service uses. */
export type LicenseRow = typeof licenses.$inferSelect;
