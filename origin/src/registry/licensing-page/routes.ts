import { licensingPageRoute } from '@vip/shared-schema/routes/origin/registry/licensing-page';
import { addRoute, type RouteKit } from '../../http/routes.js';
import type { LicenseService } from '../licenses/service.js';
import { renderLicensingPage } from './render.js';

/** Public: the page the gate's `license_url` points at. */
export function registerLicensingPageRoutes({ app, registry }: RouteKit, licenses: LicenseService): void {
  addRoute(app, registry, licensingPageRoute, {
    handler: async ({ query }) => renderLicensingPage(await licenses.licensingPageVoice(query.voice_id)),
  });
}
