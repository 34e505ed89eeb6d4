import { limits } from '@vip/shared-schema';
import { screenSampleRoute } from '@vip/shared-schema/routes/origin/screening';
import { callerOf } from '../auth/index.js';
import { readMultipartForm } from '../http/multipart-form.js';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { ScreeningService } from './service.js';

/** Call inside a scope that has @fastify/multipart registered (see server.ts). */
export function registerScreeningRoutes({ app, registry, guards }: RouteKit, screening: ScreeningService): void {
  addRoute(app, registry, screenSampleRoute, {
    guards: [guards.platformOrUser],
    handler: async (_input, request) => {
      const caller = callerOf(request);
      await screening.admit(caller);
      const form = await readMultipartForm(request, { files: { audio: { maxCount: limits.screenMaxFiles } }, fields: ['platform_name'] });
      return screening.screen(caller, form);
    },
  });
}
