import { z } from 'zod';
import { isoTimestamp, uuid } from '../../common.js';
import { defineRoute } from '../../contract.js';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_TEST_EVENT } from '../../enums.js';
import { WEBHOOK_EVENTS } from '../../webhook-events.js';
import { WEBHOOK_SECRET_PREFIX } from '../../webhooks.js';

/** The origin's webhook routes (docs/CONTRACT.md#answers-to-the-specifications-gaps, docs/CONTRACT.md#contract-details). */

/** `whsec_` + base64 of 24 to 64 random bytes, as Standard Webhooks libraries expect. */
const webhookSecret = z
  .string()
  .regex(new RegExp(`^${WEBHOOK_SECRET_PREFIX}[A-Za-z0-9+/]{32,88}={0,2}$`), 'whsec_ followed by base64 of 24 to 64 bytes');

export const registerWebhookRequestSchema = z
  .strictObject({
    url: z.string().min(1).max(2048),
    secret: webhookSecret.optional(),
    events: z
      .array(z.enum(WEBHOOK_EVENTS))
      .min(1)
      .max(WEBHOOK_EVENTS.length)
      .refine((events) => new Set(events).size === events.length, 'events must not repeat'),
  })
  .meta({ id: 'RegisterWebhookRequest' });

export const registeredWebhookSchema = z
  .object({ webhook_id: uuid, url: z.string(), events: z.array(z.enum(WEBHOOK_EVENTS)), secret: z.string(), created_at: isoTimestamp })
  .meta({ id: 'RegisteredWebhook' });

export const webhookSchema = z
  .object({
    webhook_id: uuid,
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    created_at: isoTimestamp,
    /** Set when the receiver answered 410 Gone. */
    disabled_at: isoTimestamp.nullable(),
    /** Until then the secret before the last rotation also signs deliveries. */
    previous_secret_valid_until: isoTimestamp.nullable(),
  })
  .meta({ id: 'Webhook' });

export const webhookListSchema = z.object({ webhooks: z.array(webhookSchema) }).meta({ id: 'WebhookList' });
export const webhookParamsSchema = z.strictObject({ webhook_id: uuid });
export const deletedWebhookSchema = z.object({ webhook_id: uuid, deleted: z.literal(true) }).meta({ id: 'DeletedWebhook' });

export const webhookTestResultSchema = z
  .object({
    webhook_id: uuid,
    /** The `webhook-id` header of the test delivery. */
    message_id: z.string(),
    delivered: z.boolean(),
    status_code: z.number().int().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'WebhookTestResult' });

export const rotatedWebhookSecretSchema = z
  .object({ webhook_id: uuid, secret: z.string(), previous_secret_valid_until: isoTimestamp })
  .meta({ id: 'RotatedWebhookSecret' });

export const WEBHOOK_DELIVERY_LIST_MAX_LIMIT = 100;

export const webhookDeliveryListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(WEBHOOK_DELIVERY_LIST_MAX_LIMIT).default(20),
});

/**
 * What became of one delivery to an endpoint: an event's (with its retries) or a test's. The body
 * sent is never returned: it may hold a sealed licence token, and the receiver has it already.
 */
export const webhookDeliveryOutcomeSchema = z
  .object({
    /** The `webhook-id` header of every attempt: what the receiver deduplicates on and logs. */
    message_id: z.string(),
    event: z.enum([...WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT]),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES),
    attempts: z.number().int().nonnegative(),
    /** The HTTP status of the last answer; null before the first attempt or when none came. */
    last_status_code: z.number().int().nullable(),
    /** Why the last attempt failed (`HTTP 500`, a timeout, a refused address); null after a 2xx. */
    last_error: z.string().nullable(),
    /** When the event happened (for a test, when it was sent). */
    occurred_at: isoTimestamp,
    last_attempt_at: isoTimestamp.nullable(),
    /** When the next attempt is due; null once the delivery is finished. */
    next_attempt_at: isoTimestamp.nullable(),
    finished_at: isoTimestamp.nullable(),
  })
  .meta({ id: 'WebhookDeliveryOutcome' });

export const webhookDeliveryListSchema = z
  .object({ deliveries: z.array(webhookDeliveryOutcomeSchema) })
  .meta({ id: 'WebhookDeliveryList' });

export const registerWebhookRoute = defineRoute({
  method: 'post',
  path: '/api/v1/webhooks/register',
  operationId: 'registerWebhook',
  summary: 'Register an endpoint for events; the secret (generated when absent) is shown only here',
  tag: 'webhooks',
  auth: ['bearer', 'apiKey'],
  body: registerWebhookRequestSchema,
  success: { status: 201, description: 'Registered', schema: registeredWebhookSchema },
  problems: ['validation_failed', 'malformed_json'],
});

export const listWebhooksRoute = defineRoute({
  method: 'get',
  path: '/api/v1/webhooks',
  operationId: 'listWebhooks',
  summary: "The caller's endpoints, without secrets",
  tag: 'webhooks',
  auth: ['bearer', 'apiKey'],
  success: { status: 200, description: 'Endpoints', schema: webhookListSchema },
  problems: [],
});

export const deleteWebhookRoute = defineRoute({
  method: 'delete',
  path: '/api/v1/webhooks/{webhook_id}',
  operationId: 'deleteWebhook',
  summary: 'Delete an endpoint; pending deliveries to it are dropped',
  tag: 'webhooks',
  auth: ['bearer', 'apiKey'],
  params: webhookParamsSchema,
  success: { status: 200, description: 'Deleted', schema: deletedWebhookSchema },
  problems: ['validation_failed', 'not_found'],
});

export const testWebhookRoute = defineRoute({
  method: 'post',
  path: '/api/v1/webhooks/{webhook_id}/test',
  operationId: 'testWebhook',
  summary: 'Send one signed `webhook.test` delivery now (no retries) and report the outcome',
  tag: 'webhooks',
  auth: ['bearer', 'apiKey'],
  params: webhookParamsSchema,
  success: { status: 200, description: 'Outcome of the attempt', schema: webhookTestResultSchema },
  problems: ['validation_failed', 'not_found'],
});

export const enableWebhookRoute = defineRoute({
  method: 'post',
  path: '/api/v1/webhooks/{webhook_id}/enable',
  operationId: 'enableWebhook',
  summary:
    'Resume deliveries to an endpoint disabled by a 410 Gone; the URL is checked again, and events from while it was disabled are not sent',
  tag: 'webhooks',
  auth: ['bearer', 'apiKey'],
  params: webhookParamsSchema,
  success: { status: 200, description: 'The endpoint, enabled', schema: webhookSchema },
  problems: ['validation_failed', 'not_found'],
});

export const rotateWebhookSecretRoute = defineRoute({
  method: 'post',
  path: '/api/v1/webhooks/{webhook_id}/rotate-secret',
  operationId: 'rotateWebhookSecret',
  summary: 'Replace the secret; the old one keeps signing (as a second signature) for a grace period',
  tag: 'webhooks',
  auth: ['bearer', 'apiKey'],
  params: webhookParamsSchema,
  success: { status: 200, description: 'New secret, shown only here', schema: rotatedWebhookSecretSchema },
  problems: ['validation_failed', 'not_found'],
});

export const listWebhookDeliveriesRoute = defineRoute({
  method: 'get',
  path: '/api/v1/webhooks/{webhook_id}/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: "An endpoint's most recent deliveries (events and tests), newest first: status, attempts, last answer, times; no bodies",
  tag: 'webhooks',
  auth: ['bearer', 'apiKey'],
  params: webhookParamsSchema,
  query: webhookDeliveryListQuerySchema,
  success: { status: 200, description: 'Deliveries, newest first', schema: webhookDeliveryListSchema },
  problems: ['validation_failed', 'not_found'],
});
