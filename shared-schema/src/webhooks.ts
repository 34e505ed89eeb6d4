import { z } from 'zod';
import { isoTimestamp, uuid } from './common.js';
import { WEBHOOK_EVENTS } from './webhook-events.js';

/**
 * Webhook signing, Standard Webhooks (docs/CONTRACT.md#answers-to-the-specifications-gaps): the signature is base64 HMAC-SHA256 of
 * "id.timestamp.body" keyed with the bytes behind the `whsec_` secret. The spec's `Service-Event`
 * header carries the same value as `webhook-signature`.
 */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** Standard Webhooks' schedule: the delay before each delivery attempt, in seconds (the origin's default). */
export const DEFAULT_RETRY_SCHEDULE_SECONDS = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 14 * 3600, 20 * 3600, 24 * 3600];
export const WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
  serviceEvent: 'service-event',
} as const;

const base64ToBytes = (text: string) => Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
const bytesToBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

export function newWebhookSecret(random: Uint8Array = crypto.getRandomValues(new Uint8Array(24))): string {
  return WEBHOOK_SECRET_PREFIX + bytesToBase64(random);
}

export async function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  const keyBytes = base64ToBytes(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret);
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestampSeconds}.${body}`));
  return `v1,${bytesToBase64(new Uint8Array(mac))}`;
}

/**
 * Several secrets (during a rotation's grace period) give several space-separated signatures, as
 * Standard Webhooks allows; a receiver accepts the delivery when any one verifies.
 */
export async function webhookHeaders(
  secret: string | readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<Record<string, string>> {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  const signature = (await Promise.all(secrets.map((each) => signWebhook(each, id, timestampSeconds, body)))).join(' ');
  return {
    [WEBHOOK_HEADERS.id]: id,
    [WEBHOOK_HEADERS.timestamp]: String(timestampSeconds),
    [WEBHOOK_HEADERS.signature]: signature,
    [WEBHOOK_HEADERS.serviceEvent]: signature,
  };
}

/** docs/CONTRACT.md#webhook-deliveries: every delivery carries at least these fields. */
export const webhookDeliverySchema = z
  .object({ event: z.enum(WEBHOOK_EVENTS), voice_id: uuid.nullable(), timestamp: isoTimestamp })
  .catchall(z.unknown())
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;
