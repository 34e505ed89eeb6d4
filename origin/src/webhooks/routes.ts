import {
  deleteWebhookRoute,
  enableWebhookRoute,
  listWebhookDeliveriesRoute,
  listWebhooksRoute,
  registerWebhookRoute,
  rotateWebhookSecretRoute,
  testWebhookRoute,
} from '@vip/shared-schema/routes/origin/webhooks';
import { callerOf } from '../auth/index.js';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { WebhookService } from './service.js';

/** Accounts (Bearer) and platforms (X-API-Key) alike; each sees only its own endpoints. */
export function registerWebhookRoutes({ app, registry, guards }: RouteKit, webhooks: WebhookService): void {
  const guard = guards.platformOrUser;
  addRoute(app, registry, registerWebhookRoute, {
    guards: [guard],
    handler: ({ body }, request) => webhooks.register(callerOf(request), body),
  });

  addRoute(app, registry, listWebhooksRoute, {
    guards: [guard],
    handler: (_input, request) => webhooks.list(callerOf(request)),
  });

  addRoute(app, registry, deleteWebhookRoute, {
    guards: [guard],
    handler: ({ params }, request) => webhooks.remove(callerOf(request), params.webhook_id),
  });

  addRoute(app, registry, testWebhookRoute, {
    guards: [guard],
    handler: ({ params }, request) => webhooks.sendTest(callerOf(request), params.webhook_id),
  });

  addRoute(app, registry, enableWebhookRoute, {
    guards: [guard],
    handler: ({ params }, request) => webhooks.enable(callerOf(request), params.webhook_id),
  });

  addRoute(app, registry, rotateWebhookSecretRoute, {
    guards: [guard],
    handler: ({ params }, request) => webhooks.rotateSecret(callerOf(request), params.webhook_id),
  });

  addRoute(app, registry, listWebhookDeliveriesRoute, {
    guards: [guard],
    handler: ({ params, query }, request) => webhooks.deliveries(callerOf(request), params.webhook_id, query),
  });
}
