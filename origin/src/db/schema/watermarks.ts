import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { bytes } from './bytes.js';

/**
 * The watermark ids the edge minted at redemption (docs/DECISIONS.md#the-watermark-in-the-service), registered to
 * their redemption when the origin collects its audit record. Only here does an id resolve to an
 * authorization: the chain entry of the redemption does not carry it. Ids are random 40-bit values
 * minted without coordination, so two redemptions may (rarely) share one: the id is indexed, not
 * unique, and a lookup answers every registration of it.
 */
export const watermarkMarks = pgTable(
  'watermark_marks',
  {
    /** The redemption's audit entry. */
    redemptionCheckId: uuid('redemption_check_id').primaryKey(),
    /** 10 lowercase hex digits, as the mark carries it. */
    watermarkId: text('watermark_id').notNull(),
    voiceId: uuid('voice_id').notNull(),
    platformName: text('platform_name').notNull(),
    intendedUse: text('intended_use').notNull(),
    /** The redeemed token: the approval's gate.decision entry carries the same jti. */
    tokenJti: text('token_jti').notNull(),
    redeemedAt: timestamp('redeemed_at', { withTimezone: true }).notNull(),
  },
  (table) => [index('watermark_marks_watermark_id_idx').on(table.watermarkId)],
);
export type WatermarkMarkRow = typeof watermarkMarks.$inferSelect;

/**
 * The signed C2PA manifest a platform deposited for the file it marked (the soft-binding API's
 * `GET /manifests/{manifestId}`, the id being the mark's redemption): the manifest store's bytes
 * only, never audio. One per synthesis.
 */
export const watermarkManifests = pgTable('watermark_manifests', {
  redemptionCheckId: uuid('redemption_check_id')
    .primaryKey()
    .references(() => watermarkMarks.redemptionCheckId, { onDelete: 'cascade' }),
  manifest: bytes('manifest').notNull(),
  depositedAt: timestamp('deposited_at', { withTimezone: true }).notNull(),
});
