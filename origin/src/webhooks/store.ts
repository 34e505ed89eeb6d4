import { WEBHOOK_TEST_EVENT } from '@vip/shared-schema';
import { and, asc, desc, eq, isNull, lte, sql } from 'drizzle-orm';
import { waitForTurn } from '../db/advisory-locks.js';
import type { Database, Executor } from '../db/client.js';
import {
  type DeliveryRow,
  domainEvents,
  type EndpointRow,
  users,
  webhookDeliveries,
  webhookEndpoints,
  webhookFannedOut,
} from '../db/schema.js';

/** Who registers and manages endpoints: an account (owner or admin), or a platform through its API key. */
export type WebhookSubscriber = { kind: 'account'; userId: string; isAdmin: boolean } | { kind: 'platform'; platformName: string };

export async function insertEndpoint(db: Executor, endpoint: typeof webhookEndpoints.$inferInsert): Promise<EndpointRow> {
  const [row] = await db.insert(webhookEndpoints).values(endpoint).returning();
  return row!;
}

/** An account's endpoints, or a platform's. */
export function endpointsOf(db: Executor, subscriber: WebhookSubscriber): Promise<EndpointRow[]> {
  return db
    .select()
    .from(webhookEndpoints)
    .where(
      subscriber.kind === 'account'
        ? eq(webhookEndpoints.ownerId, subscriber.userId)
        : eq(webhookEndpoints.platformName, subscriber.platformName),
    )
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
}

export async function findEndpoint(db: Executor, id: string): Promise<EndpointRow | null> {
  const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  return row ?? null;
}

export async function deleteEndpoint(db: Executor, id: string): Promise<void> {
  await db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id));
}

export async function rotateSecret(db: Executor, id: string, secret: string, previous: string, previousUntil: Date): Promise<void> {
  await db
    .update(webhookEndpoints)
    .set({ secret, previousSecret: previous, previousSecretUntil: previousUntil })
    .where(eq(webhookEndpoints.id, id));
}

export interface StoredSecrets {
  id: string;
  secret: string;
  previousSecret: string | null;
}

export function storedSecrets(db: Executor): Promise<StoredSecrets[]> {
  return db
    .select({ id: webhookEndpoints.id, secret: webhookEndpoints.secret, previousSecret: webhookEndpoints.previousSecret })
    .from(webhookEndpoints);
}

/** Only if the row still holds what was read: a rotation in between wins. Returns whether it was replaced. */
export async function replaceStoredSecrets(
  db: Executor,
  read: StoredSecrets,
  replacement: { secret: string; previousSecret: string | null },
): Promise<boolean> {
  const replaced = await db
    .update(webhookEndpoints)
    .set(replacement)
    .where(
      and(
        eq(webhookEndpoints.id, read.id),
        eq(webhookEndpoints.secret, read.secret),
        read.previousSecret === null ? isNull(webhookEndpoints.previousSecret) : eq(webhookEndpoints.previousSecret, read.previousSecret),
      ),
    )
    .returning({ id: webhookEndpoints.id });
  return replaced.length > 0;
}

export interface PendingEvent {
  id: number;
  eventType: string;
  voiceId: string | null;
  ownerId: string | null;
  platformName: string | null;
  payload: unknown;
  occurredAt: Date;
}

export async function lockFanOut(db: Executor): Promise<void> {
  await waitForTurn(db, 'webhookFanOut');
}

/**
 * How far behind the newest fanned-out event a late commit is still looked for: an event whose
 * transaction committed after this many later events were fanned out would be missed. Bounds the
 * anti-join, which would otherwise walk the whole event history every round.
 */
const LATE_COMMIT_WINDOW = 100_000;

/** Events not fanned out yet, whatever order their transactions committed in. */
export function eventsToFanOut(db: Executor, limit: number): Promise<PendingEvent[]> {
  return db
    .select({
      id: domainEvents.id,
      eventType: domainEvents.eventType,
      voiceId: domainEvents.voiceId,
      ownerId: domainEvents.ownerId,
      platformName: domainEvents.platformName,
      payload: domainEvents.payload,
      occurredAt: domainEvents.occurredAt,
    })
    .from(domainEvents)
    .where(
      sql`${domainEvents.id} > (select coalesce(max(${webhookFannedOut.eventId}), 0) - ${LATE_COMMIT_WINDOW} from ${webhookFannedOut})
        and not exists (select 1 from ${webhookFannedOut} where ${webhookFannedOut.eventId} = ${domainEvents.id})`,
    )
    .orderBy(asc(domainEvents.id))
    .limit(limit);
}

export interface Subscriber {
  id: string;
  /** An account's endpoint… */
  ownerId: string | null;
  /** …or a platform's. */
  platformName: string | null;
  events: string[];
  createdAt: Date;
  ownerIsAdmin: boolean;
}

export async function activeSubscribers(db: Executor): Promise<Subscriber[]> {
  const rows = await db
    .select({
      id: webhookEndpoints.id,
      ownerId: webhookEndpoints.ownerId,
      platformName: webhookEndpoints.platformName,
      events: webhookEndpoints.events,
      createdAt: webhookEndpoints.createdAt,
      role: users.role,
    })
    .from(webhookEndpoints)
    .leftJoin(users, eq(users.id, webhookEndpoints.ownerId))
    .where(isNull(webhookEndpoints.disabledAt));
  return rows.map(({ role, ...row }) => ({ ...row, ownerIsAdmin: role === 'admin' }));
}

export async function insertDeliveries(db: Executor, deliveries: (typeof webhookDeliveries.$inferInsert)[]): Promise<void> {
  if (deliveries.length > 0) await db.insert(webhookDeliveries).values(deliveries).onConflictDoNothing();
}

export async function markFannedOut(db: Executor, eventIds: number[]): Promise<void> {
  if (eventIds.length > 0) {
    await db
      .insert(webhookFannedOut)
      .values(eventIds.map((eventId) => ({ eventId })))
      .onConflictDoNothing();
  }
}

/**
 * The delivery may go out as far as order goes: it has no order key, or no earlier delivery of its
 * endpoint with the same key is still pending (being sent, or waiting for a retry).
 */
const isOrderHead = sql`(${webhookDeliveries.orderKey} is null or not exists (
  select 1 from ${webhookDeliveries} as earlier
  where earlier.endpoint_id = ${webhookDeliveries.endpointId} and earlier.order_key = ${webhookDeliveries.orderKey}
    and earlier.status = 'pending'
    and (earlier.occurred_at, earlier.event_id) < (${webhookDeliveries.occurredAt}, ${webhookDeliveries.eventId})))`;

export interface ClaimedDelivery {
  id: number;
  messageId: string;
  endpointId: string;
  body: string;
  attempts: number;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
}

export interface ClaimLimits {
  /** Deliveries claimed at most, all endpoints together. */
  total: number;
  /** Deliveries of one endpoint in flight at most, whichever process sends them (WEBHOOK_CONCURRENCY). */
  perEndpoint: number;
}

/**
 * Claims due deliveries by leasing them until `leaseUntil` (no transaction is held while sending):
 * per endpoint, its oldest due order heads, as many as it has free places in flight. Two statements
 * in one transaction: the first locks the endpoints with due deliveries (`SKIP LOCKED`: another
 * process claiming for one at this moment keeps it), so the second, which reads a snapshot taken
 * after the lock, counts what that other process leased and never exceeds the bound or claims a
 * delivery twice.
 */
export function claimDueDeliveries(db: Database, now: Date, leaseUntil: Date, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  return db.transaction(async (tx) => {
    // An index probe per endpoint (on endpoint and due time), never a walk through the deliveries.
    const earliestDue = sql`(select min(${webhookDeliveries.nextAttemptAt}) from ${webhookDeliveries}
      where ${webhookDeliveries.endpointId} = ${webhookEndpoints.id} and ${webhookDeliveries.status} = 'pending')`;
    const endpoints = await tx
      .select({ id: webhookEndpoints.id })
      .from(webhookEndpoints)
      .where(and(isNull(webhookEndpoints.disabledAt), sql`${earliestDue} <= ${now}`))
      .orderBy(earliestDue)
      .limit(limits.total)
      // Not FOR UPDATE: that would also stop the fan-out inserting deliveries that reference the row.
      .for('no key update', { skipLocked: true });
    if (endpoints.length === 0) return [];
    // Per endpoint, in event order, the due order heads that fit its free places.
    const due = sql`select claimable.id from (values ${sql.join(
      endpoints.map((endpoint) => sql`(${endpoint.id}::uuid)`),
      sql`, `,
    )}) as endpoint(id)
      cross join lateral (
        select ${webhookDeliveries.id} as id from ${webhookDeliveries}
        where ${webhookDeliveries.endpointId} = endpoint.id and ${webhookDeliveries.status} = 'pending'
          and ${webhookDeliveries.nextAttemptAt} <= ${now} and ${isOrderHead}
        order by ${webhookDeliveries.occurredAt}, ${webhookDeliveries.eventId}
        limit greatest(0, ${limits.perEndpoint} - (
          select count(*) from ${webhookDeliveries} as leased
          where leased.endpoint_id = endpoint.id and leased.status = 'pending' and leased.leased_until > ${now}))
      ) as claimable
      limit ${limits.total}`;
    // The endpoint's address and secrets come back with the claim, read under the endpoint's lock.
    return tx
      .update(webhookDeliveries)
      .set({ nextAttemptAt: leaseUntil, leasedUntil: leaseUntil })
      .from(webhookEndpoints)
      .where(
        and(
          // An array, so the rows are then found by primary key.
          sql`${webhookDeliveries.id} = any(array(${due}))`,
          eq(webhookEndpoints.id, webhookDeliveries.endpointId),
          // Checked again on the row as it is now, should another process have changed it meanwhile.
          eq(webhookDeliveries.status, 'pending'),
          lte(webhookDeliveries.nextAttemptAt, now),
        ),
      )
      .returning({
        id: webhookDeliveries.id,
        messageId: webhookDeliveries.messageId,
        endpointId: webhookDeliveries.endpointId,
        body: webhookDeliveries.body,
        attempts: webhookDeliveries.attempts,
        url: webhookEndpoints.url,
        secret: webhookEndpoints.secret,
        previousSecret: webhookEndpoints.previousSecret,
        previousSecretUntil: webhookEndpoints.previousSecretUntil,
      });
  });
}

export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
  /** When the attempt ended. */
  at: Date;
}

export const markDelivered = (db: Executor, id: number, attempt: AttemptRecord): Promise<void> =>
  recordAttempt(db, id, attempt, { status: 'delivered', finishedAt: attempt.at });

export const markRetry = (db: Executor, id: number, attempt: AttemptRecord, retryAt: Date): Promise<void> =>
  recordAttempt(db, id, attempt, { nextAttemptAt: retryAt });

export const markGivenUp = (db: Executor, id: number, attempt: AttemptRecord): Promise<void> =>
  recordAttempt(db, id, attempt, { status: 'failed', finishedAt: attempt.at });

/** One more attempt on a queued delivery, what it answered, and what that makes of the delivery. */
async function recordAttempt(
  db: Executor,
  id: number,
  attempt: AttemptRecord,
  outcome: Partial<Pick<typeof webhookDeliveries.$inferInsert, 'status' | 'nextAttemptAt' | 'finishedAt'>>,
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ attempts: sql`${webhookDeliveries.attempts} + 1`, leasedUntil: null, ...lastAttempt(attempt), ...outcome })
    .where(eq(webhookDeliveries.id, id));
}

/** The columns that keep what a delivery's last attempt answered (an error message clipped to 500 characters). */
const lastAttempt = (attempt: AttemptRecord) => ({
  lastAttemptAt: attempt.at,
  lastStatusCode: attempt.statusCode,
  lastError: attempt.error?.slice(0, 500) ?? null,
});

/** A test delivery, sent once and never retried: recorded finished, beside the endpoint's events. */
export async function recordTestDelivery(
  db: Executor,
  delivery: { messageId: string; endpointId: string; body: string; sentAt: Date },
  attempt: AttemptRecord,
): Promise<void> {
  await db.insert(webhookDeliveries).values({
    messageId: delivery.messageId,
    endpointId: delivery.endpointId,
    eventId: null,
    eventType: WEBHOOK_TEST_EVENT,
    occurredAt: delivery.sentAt,
    body: delivery.body,
    status: attempt.error === null ? 'delivered' : 'failed',
    attempts: 1,
    nextAttemptAt: delivery.sentAt,
    ...lastAttempt(attempt),
    finishedAt: attempt.at,
  });
}

/** 410 Gone: the receiver wants nothing more. The endpoint is disabled and its queue dropped. */
export async function disableEndpoint(db: Executor, endpointId: string, now: Date): Promise<void> {
  await db.update(webhookEndpoints).set({ disabledAt: now }).where(eq(webhookEndpoints.id, endpointId));
  await db
    .update(webhookDeliveries)
    .set({ status: 'cancelled', finishedAt: now })
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, 'pending')));
}

export async function enableEndpoint(db: Executor, endpointId: string): Promise<EndpointRow> {
  const [row] = await db.update(webhookEndpoints).set({ disabledAt: null }).where(eq(webhookEndpoints.id, endpointId)).returning();
  return row!;
}

/** When the earliest order head of an enabled endpoint is due; later deliveries of an order key wait for their head anyway. */
export async function nextDueAt(db: Executor): Promise<Date | null> {
  // Walks the pending deliveries by due time (an index) and stops at the first order head.
  const [row] = await db
    .select({ due: webhookDeliveries.nextAttemptAt })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, and(eq(webhookEndpoints.id, webhookDeliveries.endpointId), isNull(webhookEndpoints.disabledAt)))
    .where(and(eq(webhookDeliveries.status, 'pending'), isOrderHead))
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(1);
  return row?.due ?? null;
}

/**
 * An endpoint's latest deliveries, newest first. Ordered by row id, the order they were created in
 * (fan-out creates an endpoint's deliveries in event order); an index on (endpoint, id) serves it.
 */
export function recentDeliveries(db: Executor, endpointId: string, limit: number): Promise<DeliveryRow[]> {
  return db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.endpointId, endpointId))
    .orderBy(desc(webhookDeliveries.id))
    .limit(limit);
}
