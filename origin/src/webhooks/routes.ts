import {
  deleteWebhookRoute,
  enableWebhookRoute,
  listWebhooksRoute,
  registerWebhookRoute,
  rotateWebhookSecretRoute,
  testWebhookRoute,
} from '@vip/shared-schema/routes/origin-webhooks';
import type { FastifyInstance } from 'fastify';
import { type Guards, principalOf } from '../auth/guard.js';
import { addRoute, type ContractRegistry } from '../http/routes.js';
import type { WebhookService } from './service.js';

export function registerWebhookRoutes(app: FastifyInstance, registry: ContractRegistry, guards: Guards, webhooks: WebhookService): void {
  addRoute(app, registry, registerWebhookRoute, {
    guards: [guards.bearer],
    handler: ({ body }, request) => webhooks.register(principalOf(request), body),
  });

  addRoute(app, registry, listWebhooksRoute, {
    guards: [guards.bearer],
    handler: (_input, request) => webhooks.list(principalOf(request)),
  });

  addRoute(app, registry, deleteWebhookRoute, {
    guards: [guards.bearer],
    handler: ({ params }, request) => webhooks.remove(principalOf(request), params.webhook_id),
  });

  addRoute(app, registry, testWebhookRoute, {
    guards: [guards.bearer],
    handler: ({ params }, request) => webhooks.sendTest(principalOf(request), params.webhook_id),
  });

  addRoute(app, registry, enableWebhookRoute, {
    guards: [guards.bearer],
    handler: ({ params }, request) => webhooks.enable(principalOf(request), params.webhook_id),
  });

  addRoute(app, registry, rotateWebhookSecretRoute, {
    guards: [guards.bearer],
    handler: ({ params }, request) => webhooks.rotateSecret(principalOf(request), params.webhook_id),
  });
}
