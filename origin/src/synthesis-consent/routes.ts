import { setVoiceConsentRoute } from '@vip/shared-schema/routes/origin-registry';
import type { FastifyInstance } from 'fastify';
import { type Guards, principalOf } from '../auth/guard.js';
import { addRoute, type ContractRegistry } from '../http/routes.js';
import type { ConsentService } from './service.js';

export function registerConsentRoutes(app: FastifyInstance, registry: ContractRegistry, guards: Guards, consents: ConsentService): void {
  addRoute(app, registry, setVoiceConsentRoute, {
    guards: [guards.bearer],
    handler: ({ params, body }, request) => consents.setConsent(principalOf(request), params.voice_id, body.status),
  });
}
