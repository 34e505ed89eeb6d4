import { grantBiometricConsentRoute } from '@vip/shared-schema/routes/origin/biometric-consent';
import { principalOf } from '../auth/index.js';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { BiometricConsentService } from './service.js';

export function registerBiometricConsentRoutes({ app, registry, guards }: RouteKit, consents: BiometricConsentService): void {
  addRoute(app, registry, grantBiometricConsentRoute, {
    guards: [guards.bearer],
    handler: ({ body }, request) => consents.grant(principalOf(request), body),
  });
}
