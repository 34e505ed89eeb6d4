import { type IntendedUse, LICENSE_DESCRIPTION_SOURCES, LICENSE_REPRESENTATIONS, LICENSE_REQUEST_STATUSES } from '@vip/shared-schema';
import { sql } from 'drizzle-orm';
import { index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/**
 * A platform's request for a licence of a voice (docs/CONTRACT.md#closing-the-loop-receipts-pages), answered by the voice's owner.
 * `voice_id` has no foreign key: deleting the voice closes its pending requests, and the platform
 * can still read what became of them. The licence token of an approval is never stored here.
 */
export const licenseRequests = pgTable(
  'license_requests',
  {
    id: uuid('id').primaryKey(),
    voiceId: uuid('voice_id').notNull(),
    platformName: text('platform_name').notNull(),
    scopes: text('scopes').array().notNull().$type<IntendedUse[]>(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** The terms (shared-schema/src/license-terms.ts): as stated, or for older rows written from the scopes by migration 0018. */
    description: text('description').notNull(),
    descriptionSource: text('description_source', { enum: LICENSE_DESCRIPTION_SOURCES }).notNull().default('stated'),
    representedBy: text('represented_by', { enum: LICENSE_REPRESENTATIONS }).notNull().default('none'),
    compensation: text('compensation'),
    message: text('message'),
    status: text('status', { enum: LICENSE_REQUEST_STATUSES }).notNull().default('pending'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    answeredAt: timestamp('answered_at', { withTimezone: true }),
    licenseId: uuid('license_id'),
    declineReason: text('decline_reason'),
    closedReason: text('closed_reason', { enum: ['consent_withdrawn', 'voice_deleted'] }),
  },
  (table) => [
    uniqueIndex('license_requests_one_pending_idx').on(table.voiceId, table.platformName).where(sql`${table.status} = 'pending'`),
    index('license_requests_voice_idx').on(table.voiceId, table.createdAt, table.id),
  ],
);

export type LicenseRequestRow = typeof licenseRequests.$inferSelect;
