import { setSynthesisConsentRoute } from '@vip/shared-schema/routes/origin/registry/synthesis-consent';
import { principalOf } from '../../auth/index.js';
import { addRoute, type RouteKit } from '../../http/routes.js';
import type { SynthesisConsentService } from './service.js';

export function registerSynthesisConsentRoutes({ app, registry, guards }: RouteKit, consents: SynthesisConsentService): void {
  addRoute(app, registry, setSynthesisConsentRoute, {
    guards: [guards.bearer],
    handler: ({ params, body }, request) => consents.setSynthesisConsent(principalOf(request), params.voice_id, body.status),
  });
}
