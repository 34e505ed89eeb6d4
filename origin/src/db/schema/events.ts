import { WEBHOOK_EVENTS } from '@vip/shared-schema';
import { sql } from 'drizzle-orm';
import { bigserial, index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Events of the service (docs/CONTRACT.md#events), written in the same transaction as the change they report;
 * the webhook sender delivers from here, so a crash between commit and delivery loses nothing.
 */
export const domainEvents = pgTable(
  'domain_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventType: text('event_type', { enum: WEBHOOK_EVENTS }).notNull(),
    voiceId: uuid('voice_id'),
    /** Whose subscriptions may receive it: the voice owner's (and admins'), or admins' only when null. */
    ownerId: uuid('owner_id'),
    /** Set for an event about a platform's own licence or request: only that platform's endpoints receive it. */
    platformName: text('platform_name'),
    /** The delivery body (docs/CONTRACT.md#webhook-deliveries, docs/CONTRACT.md#events) without secrets or biometric data. */
    payload: jsonb('payload').notNull(),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull().default(sql`now()`),
  },
  (table) => [
    index('domain_events_occurred_idx').on(table.occurredAt, table.id),
    // Whose an erased voice was, for the edge's decisions about it that reach the origin after the erasure.
    index('domain_events_voice_deleted_idx').on(table.voiceId).where(sql`${table.eventType} = 'voice.deleted'`),
  ],
);
