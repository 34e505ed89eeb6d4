import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * The hash chain (DESIGN section 5). One row per decision, `seq` without gaps; every column but
 * `entry_hash` is covered by `entry_hash` (shared-schema auditEntryHash), so verification
 * recomputes it from these columns alone. `decided_at` is kept as the text the deciding plane
 * wrote, so the hashed bytes survive the round trip exactly. No biometric data, no secrets.
 */
export const auditEntries = pgTable(
  'audit_entries',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    checkId: uuid('check_id').notNull().unique(),
    kind: text('kind').notNull(),
    decidedAt: text('decided_at').notNull(),
    recordedAt: timestamp('recorded_at', { withTimezone: true, precision: 3 }).notNull(),
    voiceId: uuid('voice_id'),
    platformName: text('platform_name'),
    intendedUse: text('intended_use'),
    decision: text('decision'),
    action: text('action'),
    reason: text('reason'),
    licenseStatus: text('license_status'),
    consentStatus: text('consent_status'),
    callerType: text('caller_type').notNull(),
    callerId: text('caller_id'),
    tokenJti: text('token_jti'),
    prevHash: text('prev_hash').notNull(),
    entryHash: text('entry_hash').notNull(),
  },
  (table) => [
    index('audit_entries_voice_idx').on(table.voiceId, table.seq),
    index('audit_entries_platform_idx').on(table.platformName, table.seq),
    index('audit_entries_recorded_idx').on(table.recordedAt),
  ],
);

/** Signed statements of the chain's size and head (DESIGN section 5), so a third party can hold the log to its past. */
export const auditCheckpoints = pgTable('audit_checkpoints', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  treeSize: bigint('tree_size', { mode: 'number' }).notNull().unique(),
  headHash: text('head_hash').notNull(),
  signedAt: timestamp('signed_at', { withTimezone: true, precision: 3 }).notNull(),
  keyId: text('key_id').notNull(),
  /** Compact JWS (EdDSA) over the canonical JSON of {tree_size, head_hash, signed_at}. */
  signature: text('signature').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().default(sql`now()`),
});
