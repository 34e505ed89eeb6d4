import {
  checkPlatformNameRoute,
  createLicenseRoute,
  listLicensesRoute,
  renewLicenseRoute,
  revokeLicenseRoute,
} from '@vip/shared-schema/routes/origin/registry/licenses';
import { principalOf } from '../../auth/index.js';
import { addRoute, type RouteKit } from '../../http/routes.js';
import type { LicenseService } from './service.js';

export function registerLicenseRoutes({ app, registry, guards }: RouteKit, licenses: LicenseService): void {
  addRoute(app, registry, checkPlatformNameRoute, {
    guards: [guards.bearer],
    handler: ({ params }) => licenses.checkPlatformName(params.platform_name),
  });

  addRoute(app, registry, createLicenseRoute, {
    guards: [guards.bearer],
    handler: ({ params, body }, request) => licenses.createLicense(principalOf(request), params.voice_id, body),
  });

  addRoute(app, registry, listLicensesRoute, {
    guards: [guards.bearer],
    handler: ({ params }, request) => licenses.listLicenses(principalOf(request), params.voice_id),
  });

  addRoute(app, registry, renewLicenseRoute, {
    guards: [guards.bearer],
    handler: ({ params, body }, request) => licenses.renewLicense(principalOf(request), params.voice_id, params.license_id, body),
  });

  addRoute(app, registry, revokeLicenseRoute, {
    guards: [guards.bearer],
    handler: ({ params }, request) => licenses.revokeLicense(principalOf(request), params.voice_id, params.license_id),
  });
}
