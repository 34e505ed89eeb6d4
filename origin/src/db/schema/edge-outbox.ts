import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Index updates waiting for the edge (docs/ARCHITECTURE.md#consistency). The row id is the update's version: it
 * only grows, so the edge can drop a stale or replayed update. Written in the same transaction as
 * the change it publishes.
 */
export const edgeOutbox = pgTable(
  'edge_outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    kind: text('kind', { enum: ['api_key', 'voice'] }).notNull(),
    /** key_hash for api_key updates, voice_id for voice updates. */
    entityKey: text('entity_key').notNull(),
    /** The SyncUpdate without its version (edge-index.ts); the version is added when sending. */
    payload: jsonb('payload').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().default(sql`now()`),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    attempts: integer('attempts').notNull().default(0),
    /** Also serves as a lease: a sender claims rows by pushing this forward before it sends them. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().default(sql`now()`),
    lastError: text('last_error'),
  },
  (table) => [index('edge_outbox_pending_idx').on(table.nextAttemptAt, table.id).where(sql`${table.deliveredAt} is null`)],
);
