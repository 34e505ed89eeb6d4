import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Decisions waiting for their place in the audit chain, from both planes: the edge's collected
 * records and the origin's own, written in the transaction that made the decision. One appender
 * moves them into the chain in order; `check_id` as the key makes every delivery idempotent.
 */
export const auditPending = pgTable(
  'audit_pending',
  {
    checkId: uuid('check_id').primaryKey(),
    /** An AuditRecord (shared-schema/src/audit.ts). */
    record: jsonb('record').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().default(sql`now()`),
  },
  // The appender takes the oldest first: after an origin outage the queue can hold a backlog.
  (table) => [index('audit_pending_received_idx').on(table.receivedAt, table.checkId)],
);
