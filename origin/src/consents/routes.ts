import { grantConsentRoute } from '@vip/shared-schema/routes/origin-voices';
import type { FastifyInstance } from 'fastify';
import { type Guards, principalOf } from '../auth/guard.js';
import { addRoute, type ContractRegistry } from '../http/routes.js';
import type { ConsentService } from './service.js';

export function registerConsentRoutes(app: FastifyInstance, registry: ContractRegistry, guards: Guards, consents: ConsentService): void {
  addRoute(app, registry, grantConsentRoute, {
    guards: [guards.bearer],
    handler: ({ body }, request) => consents.grant(principalOf(request), body),
  });
}
