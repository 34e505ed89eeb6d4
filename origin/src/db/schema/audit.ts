import type { AuditEntry } from '@vip/shared-schema';
import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** A field of the stored entry JSON, as text: what the derived columns below are made of. */
const entryField = (field: keyof AuditEntry) => sql.raw(`(entry_json::jsonb ->> '${field}')`);

/**
 * The hash chain (docs/CONTRACT.md#audit-chain). One row per decision, `seq` without gaps. `entry_json` is the
 * entry itself: the canonical JSON of every field but `entry_hash`, exactly the bytes hashed after
 * the previous entry's hash, so verification reads one text per entry and re-serialises nothing.
 * The other columns are derived from it by Postgres (generated, so no statement can set them apart
 * from the entry) and exist to be filtered, ordered and indexed on. `recorded_at` and `decided_at`
 * stay the ISO text of one fixed form, which sorts in time order. No biometric data, no secrets.
 */
export const auditEntries = pgTable(
  'audit_entries',
  {
    entryJson: text('entry_json').notNull(),
    entryHash: text('entry_hash').notNull(),
    seq: bigint('seq', { mode: 'number' })
      .generatedAlwaysAs(sql`${entryField('seq')}::bigint`)
      .primaryKey(),
    checkId: uuid('check_id')
      .generatedAlwaysAs(sql`${entryField('check_id')}::uuid`)
      .notNull()
      .unique(),
    recordedAt: text('recorded_at').generatedAlwaysAs(entryField('recorded_at')).notNull(),
    decidedAt: text('decided_at').generatedAlwaysAs(entryField('decided_at')).notNull(),
    voiceId: uuid('voice_id').generatedAlwaysAs(sql`${entryField('voice_id')}::uuid`),
    platformName: text('platform_name').generatedAlwaysAs(entryField('platform_name')),
    decision: text('decision').generatedAlwaysAs(entryField('decision')),
    callerType: text('caller_type').generatedAlwaysAs(entryField('caller_type')).notNull(),
    callerId: text('caller_id').generatedAlwaysAs(entryField('caller_id')),
  },
  (table) => [
    index('audit_entries_voice_idx').on(table.voiceId, table.seq),
    index('audit_entries_platform_idx').on(table.platformName, table.seq),
    index('audit_entries_recorded_idx').on(table.recordedAt),
    index('audit_entries_decided_idx').on(table.decidedAt, table.seq),
  ],
);

/** Signed statements of the chain's size and head (docs/CONTRACT.md#audit-chain), so a third party can hold the log to its past. */
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

export type CheckpointRow = typeof auditCheckpoints.$inferSelect;
