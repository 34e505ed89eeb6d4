import type { WebhookEvent } from '@vip/shared-schema';
import type { Executor } from '../db/client.js';
import { domainEvents } from '../db/schema.js';

export interface NewEvent {
  type: WebhookEvent;
  voiceId: string | null;
  ownerId: string | null;
  /** Set for an event about a platform's own licence or request: it goes to that platform's endpoints only. */
  platformName?: string | null;
  /** Event-specific fields; `event`, `voice_id` and `timestamp` (docs/CONTRACT.md#webhook-deliveries) are added here. */
  fields?: Record<string, unknown>;
}

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
