import {
  approveLicenseRequestRoute,
  declineLicenseRequestRoute,
  getLicenseRequestRoute,
  listLicenseRequestsRoute,
  requestLicenseRoute,
} from '@vip/shared-schema/routes/origin/license-requests';
import { callerOf, principalOf } from '../auth/index.js';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { LicenseRequestService } from './service.js';

export function registerLicenseRequestRoutes({ app, registry, guards }: RouteKit, requests: LicenseRequestService): void {
  addRoute(app, registry, requestLicenseRoute, {
    guards: [guards.platformKey],
    handler: ({ params, body }, request) => requests.request(callerOf(request), params.voice_id, body),
  });

  addRoute(app, registry, listLicenseRequestsRoute, {
    guards: [guards.bearer],
    handler: ({ params, query }, request) => requests.list(principalOf(request), params.voice_id, query),
  });

  addRoute(app, registry, approveLicenseRequestRoute, {
    guards: [guards.bearer],
    handler: ({ params, body }, request) => requests.approve(principalOf(request), params.voice_id, params.request_id, body),
  });

  addRoute(app, registry, declineLicenseRequestRoute, {
    guards: [guards.bearer],
    handler: ({ params, body }, request) => requests.decline(principalOf(request), params.voice_id, params.request_id, body.reason),
  });

  addRoute(app, registry, getLicenseRequestRoute, {
    guards: [guards.platformOrUser],
    handler: ({ params }, request) => requests.read(callerOf(request), params.request_id),
  });
}
