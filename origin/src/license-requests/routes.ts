import {
  approveLicenseRequestRoute,
  declineLicenseRequestRoute,
  getLicenseRequestRoute,
  listLicenseRequestsRoute,
  requestLicenseRoute,
} from '@vip/shared-schema/routes/origin-license-requests';
import type { FastifyInstance } from 'fastify';
import { type Guards, principalOf } from '../auth/guard.js';
import type { Database } from '../db/client.js';
import { addRoute, type ContractRegistry } from '../http/routes.js';
import { callerOf, platformKeyGuard, platformOrUserGuard } from '../platforms/caller-guard.js';
import type { LicenseRequestService } from './service.js';

export function registerLicenseRequestRoutes(
  app: FastifyInstance,
  registry: ContractRegistry,
  guards: Guards,
  db: Database,
  requests: LicenseRequestService,
): void {
  const platformOrUser = platformOrUserGuard(db, guards);

  addRoute(app, registry, requestLicenseRoute, {
    guards: [platformKeyGuard(db, guards)],
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
    guards: [platformOrUser],
    handler: ({ params }, request) => requests.read(callerOf(request), params.request_id),
  });
}
