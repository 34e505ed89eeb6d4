import { grantConsentRoute } from '@vip/shared-schema/routes/origin-voices';
import { principalOf } from '../auth/guard.js';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { ConsentService } from './service.js';

export function registerConsentRoutes({ app, registry, guards }: RouteKit, consents: ConsentService): void {
  addRoute(app, registry, grantConsentRoute, {
    guards: [guards.bearer],
    handler: ({ body }, request) => consents.grant(principalOf(request), body),
  });
}
