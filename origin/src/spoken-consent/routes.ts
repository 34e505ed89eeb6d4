import { createConsentChallengeRoute } from '@vip/shared-schema/routes/origin-voices';
import { principalOf } from '../auth/index.js';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { SpokenConsentService } from './service.js';

export function registerSpokenConsentRoutes({ app, registry, guards }: RouteKit, spokenConsent: SpokenConsentService): void {
  addRoute(app, registry, createConsentChallengeRoute, {
    guards: [guards.bearer],
    handler: (_input, request) => spokenConsent.issueChallenge(principalOf(request)),
  });
}
