import { createSpokenConsentChallengeRoute } from '@vip/shared-schema/routes/origin/spoken-consent';
import { principalOf } from '../auth/index.js';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { SpokenConsentService } from './service.js';

export function registerSpokenConsentRoutes({ app, registry, guards }: RouteKit, spokenConsent: SpokenConsentService): void {
  addRoute(app, registry, createSpokenConsentChallengeRoute, {
    guards: [guards.bearer],
    handler: (_input, request) => spokenConsent.issueChallenge(principalOf(request)),
  });
}
