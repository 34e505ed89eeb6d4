import { sql } from 'drizzle-orm';
import { bigint, boolean, check, pgTable, primaryKey, smallint, text, timestamp } from 'drizzle-orm/pg-core';
import { bytes } from './bytes.js';

/**
 * The audit log's Merkle tree as tlog-tiles (origin/src/audit/merkle.ts): tile (level, index) holds
 * the 32-byte hashes of tree level 8 * level, nodes 256 * index on; a partial tile grows until it
 * holds 256. Written only by the appender, in the transaction that appends the entries.
 */
export const auditTlogTiles = pgTable(
  'audit_tlog_tiles',
  {
    level: smallint('level').notNull(),
    index: bigint('index', { mode: 'number' }).notNull(),
    hashes: bytes('hashes').notNull(),
  },
  (table) => [primaryKey({ columns: [table.level, table.index] })],
);

/**
 * One row: the tree's size and root, kept in step with the chain by the appender, and the newest
 * signed C2SP checkpoint (a signed note), which every receipt quotes.
 */
export const auditTlogState = pgTable(
  'audit_tlog_state',
  {
    id: boolean('id').primaryKey().default(true),
    treeSize: bigint('tree_size', { mode: 'number' }).notNull(),
    rootHash: bytes('root_hash').notNull(),
    signedSize: bigint('signed_size', { mode: 'number' }).notNull().default(0),
    signedRoot: bytes('signed_root'),
    signedNote: text('signed_note'),
    signedAt: timestamp('signed_at', { withTimezone: true, precision: 3 }),
  },
  (table) => [check('audit_tlog_state_single_row', sql`${table.id}`)],
);

export type TlogState = typeof auditTlogState.$inferSelect;
