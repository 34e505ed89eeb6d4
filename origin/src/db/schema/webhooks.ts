import { WEBHOOK_DELIVERY_STATUSES } from '@vip/shared-schema';
import { sql } from 'drizzle-orm';
import { bigint, bigserial, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './auth.js';
import { domainEvents } from './events.js';
import { platforms } from './platforms.js';

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey(),
    /** The account that registered it; null for a platform's endpoint. */
    ownerId: uuid('owner_id').references(() => users.id, { onDelete: 'cascade' }),
    /** The platform whose API key registered it; null for an account's endpoint. */
    platformName: text('platform_name').references(() => platforms.name, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    /** WebhookEvent names. */
    events: jsonb('events').$type<string[]>().notNull(),
    /**
     * The `whsec_…` secret, encrypted (`v1.<kid>.<nonce>.<ciphertext>`, src/webhooks/secret-encryption.ts):
     * not hashed, because every delivery is signed with it.
     */
    secret: text('secret').notNull(),
    /** After a rotation the old secret (encrypted too) also signs deliveries until `previous_secret_until`. */
    previousSecret: text('previous_secret'),
    previousSecretUntil: timestamp('previous_secret_until', { withTimezone: true }),
    /** Set when the receiver answered 410 Gone; nothing more is sent. */
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (table) => [
    index('webhook_endpoints_owner_idx').on(table.ownerId, table.createdAt),
    index('webhook_endpoints_platform_idx').on(table.platformName, table.createdAt),
    check('webhook_endpoints_one_subscriber', sql`(${table.ownerId} is null) <> (${table.platformName} is null)`),
  ],
);

export type EndpointRow = typeof webhookEndpoints.$inferSelect;

/**
 * One row per (endpoint, event), created by the fan-out; the worker's whole state, so a restart
 * resumes where it stopped. `message_id` is the stable `webhook-id` of every attempt. A test
 * delivery is recorded here too, already finished and with no event, so the endpoint's history
 * (`GET /api/v1/webhooks/{id}/deliveries`) shows it beside the events'.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    messageId: text('message_id').notNull().unique(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    /** The domain event delivered; null for a test delivery. */
    eventId: bigint('event_id', { mode: 'number' }),
    eventType: text('event_type').notNull(),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
    /** The exact body sent, identical on every attempt. */
    body: text('body').notNull(),
    status: text('status', { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** Also the claim lease while an attempt is under way. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull(),
    /**
     * The endpoint's deliveries with the same key go out one at a time, in event order: the voice id
     * of an event that changes a voice's state (ORDERED_WEBHOOK_EVENTS). Null: delivered independently.
     */
    orderKey: text('order_key'),
    /** Set while an attempt is under way (the claim's lease): counts toward the endpoint's deliveries in flight. */
    leasedUntil: timestamp('leased_until', { withTimezone: true }),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (table) => [
    uniqueIndex('webhook_deliveries_endpoint_event_idx').on(table.endpointId, table.eventId),
    index('webhook_deliveries_endpoint_recent_idx').on(table.endpointId, table.id),
    index('webhook_deliveries_pending_idx').on(table.endpointId, table.occurredAt, table.eventId).where(sql`${table.status} = 'pending'`),
    index('webhook_deliveries_due_idx').on(table.nextAttemptAt).where(sql`${table.status} = 'pending'`),
    // The claim: does this endpoint have a delivery due, is this one its order key's oldest, how many are in flight.
    index('webhook_deliveries_endpoint_due_idx').on(table.endpointId, table.nextAttemptAt).where(sql`${table.status} = 'pending'`),
    index('webhook_deliveries_order_idx')
      .on(table.endpointId, table.orderKey, table.occurredAt, table.eventId)
      .where(sql`${table.status} = 'pending' and ${table.orderKey} is not null`),
    index('webhook_deliveries_in_flight_idx')
      .on(table.endpointId, table.leasedUntil)
      .where(sql`${table.status} = 'pending' and ${table.leasedUntil} is not null`),
  ],
);

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** Domain events already fanned out to deliveries; an anti-join on it finds the rest, whatever their commit order. */
export const webhookFannedOut = pgTable('webhook_fanned_out', {
  eventId: bigint('event_id', { mode: 'number' })
    .primaryKey()
    .references(() => domainEvents.id, { onDelete: 'cascade' }),
});
