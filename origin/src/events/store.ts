import type { WebhookEvent, WebhookEventFields } from '@vip/shared-schema';
import { and, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { domainEvents } from '../db/schema.js';

/**
 * One event to deliver, with the fields its recipient receives (shared-schema/src/webhook-events.ts):
 * the voice's owner (`ownerId`, or null when the voice's owner is not known), or the platform the event is
 * about (`platformName`: its own endpoints only). `event`, `voice_id` and `timestamp`
 * (docs/CONTRACT.md#webhook-deliveries) are added here.
 */
export type NewEvent = {
  [E in WebhookEvent]:
    | { type: E; voiceId: string | null; ownerId: string | null; platformName?: undefined; fields: WebhookEventFields<E, 'owner'> }
    | { type: E; voiceId: string | null; ownerId: null; platformName: string; fields: WebhookEventFields<E, 'platform'> };
}[WebhookEvent];

/** Call inside the transaction that makes the change the event reports. */
export async function recordEvent(db: Executor, event: NewEvent, now: Date): Promise<number> {
  const payload = { event: event.type, voice_id: event.voiceId, timestamp: now.toISOString(), ...event.fields };
  const [row] = await db
    .insert(domainEvents)
    .values({
      eventType: event.type,
      voiceId: event.voiceId,
      ownerId: event.ownerId,
      platformName: event.platformName ?? null,
      payload,
      occurredAt: now,
    })
    .returning({ id: domainEvents.id });
  return row!.id;
}

/**
 * Whose each of these erased voices was, as its `voice.deleted` event recorded it (the voice row is
 * gone). The edge's decisions about a voice reach the origin a moment after they were made, so one
 * made just before the erasure still finds its owner here.
 */
export async function ownersOfErasedVoices(db: Executor, voiceIds: readonly string[]): Promise<Map<string, string>> {
  if (voiceIds.length === 0) return new Map();
  const rows = await db
    .select({ voiceId: domainEvents.voiceId, ownerId: domainEvents.ownerId })
    .from(domainEvents)
    .where(and(eq(domainEvents.eventType, 'voice.deleted'), inArray(domainEvents.voiceId, [...voiceIds])));
  return new Map(rows.flatMap((row) => (row.voiceId && row.ownerId ? [[row.voiceId, row.ownerId] as const] : [])));
}
