import { z } from 'zod';
import { timingSafeEqual } from '../canonical.js';
import { isoTimestamp, uuid } from '../common.js';
import { WEBHOOK_TEST_EVENT } from '../enums.js';
import { signWebhook, WEBHOOK_HEADERS, type WebhookDelivery, webhookDeliverySchema } from '../webhooks.js';

/**
 * Receiver side of the service's webhooks (Standard Webhooks, shared-schema/src/webhooks.ts): the
 * signature is `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` in `webhook-signature`, and the
 * same value in the spec's `Service-Event` header. During a secret rotation a delivery carries two
 * space-separated signatures; one match is enough.
 */

/** `POST /api/v1/webhooks/{id}/test` sends this (origin/src/webhooks/service.ts); it is not a registrable event. */
export const webhookTestDeliverySchema = z.object({
  event: z.literal(WEBHOOK_TEST_EVENT),
  voice_id: z.null(),
  timestamp: isoTimestamp,
  webhook_id: uuid,
});
export type WebhookTestDelivery = z.infer<typeof webhookTestDeliverySchema>;

export interface VerifiedWebhook {
  /** `webhook-id`: the same on every retry of one delivery, so deduplicate on it. */
  id: string;
  /** `webhook-timestamp` of this attempt, Unix seconds. */
  timestamp: number;
  payload: WebhookDelivery | WebhookTestDelivery;
}

export type WebhookVerificationFailure = 'missing_headers' | 'timestamp_out_of_tolerance' | 'bad_signature' | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Fetch `Headers`, or a plain record such as Node's `IncomingHttpHeaders`. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  const key = Object.keys(headers).find((each) => each.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

export interface VerifyWebhookOptions {
  /** Accepted distance between `webhook-timestamp` and now, in seconds (Standard Webhooks suggests 5 minutes). */
  toleranceSeconds?: number;
  /** Now, in Unix seconds (tests pin it). */
  nowSeconds?: number;
}

/**
 * Checks a delivery and returns its parsed payload, or throws WebhookVerificationError. `body` must
 * be the raw request body exactly as received: re-serialising parsed JSON changes the bytes.
 */
export async function verifyWebhook(
  secret: string,
  headers: HeaderSource,
  body: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): Promise<VerifiedWebhook> {
  const id = header(headers, WEBHOOK_HEADERS.id);
  const timestamp = header(headers, WEBHOOK_HEADERS.timestamp);
  const signatures = header(headers, WEBHOOK_HEADERS.signature) ?? header(headers, WEBHOOK_HEADERS.serviceEvent);
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      'missing_headers',
      'webhook-id, webhook-timestamp and webhook-signature (or Service-Event) are required',
    );
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('missing_headers', 'webhook-timestamp is not Unix seconds');
  const seconds = Number(timestamp);
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - seconds) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', 'webhook-timestamp is too far from now');
  }
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const expected = await signWebhook(secret, id, seconds, text);
  if (!signatures.split(' ').some((candidate) => timingSafeEqual(candidate, expected))) {
    throw new WebhookVerificationError('bad_signature', 'no signature matches this secret');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'the signed body is not JSON');
  }
  const payload = webhookDeliverySchema.or(webhookTestDeliverySchema).safeParse(json);
  if (!payload.success) throw new WebhookVerificationError('invalid_payload', 'the signed body is not a delivery of this service');
  return { id, timestamp: seconds, payload: payload.data };
}
