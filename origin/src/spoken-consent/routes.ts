import { createSpokenConsentChallengeRoute, spokenConsentRecordingRoute } from '@vip/shared-schema/routes/origin/spoken-consent';
import { principalOf } from '../auth/index.js';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { SpokenConsentService } from './service.js';

export function registerSpokenConsentRoutes({ app, registry, guards }: RouteKit, spokenConsent: SpokenConsentService): void {
  addRoute(app, registry, createSpokenConsentChallengeRoute, {
    guards: [guards.bearer],
    handler: async (_input, request, reply) => {
      const principal = principalOf(request);
      reply.headers(await spokenConsent.admitChallenge(principal));
      return spokenConsent.issueChallenge(principal);
    },
  });

  addRoute(app, registry, spokenConsentRecordingRoute, {
    guards: [guards.bearer],
    handler: ({ params }, request) => spokenConsent.recordingOf(principalOf(request), params.voice_id),
    // A download of biometric data: saved as a file, never kept by a cache.
    headers: { 'content-disposition': 'attachment; filename="spoken-consent"', 'cache-control': 'no-store' },
  });
}
