import { compareVoicesRoute } from '@vip/shared-schema/routes/origin/detection';
import { callerOf } from '../auth/index.js';
import { readMultipartForm } from '../http/multipart-form.js';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { DetectionService } from './service.js';

/** Call inside a scope that has @fastify/multipart registered (see server.ts). */
export function registerDetectionRoutes({ app, registry, guards }: RouteKit, detection: DetectionService): void {
  addRoute(app, registry, compareVoicesRoute, {
    guards: [guards.platformOrUser],
    handler: async (_input, request, reply) => {
      const caller = callerOf(request);
      reply.headers(await detection.admit(caller));
      const form = await readMultipartForm(request, { files: { audio1: { maxCount: 1 }, audio2: { maxCount: 1 } }, fields: ['voice_id'] });
      return detection.compare(caller, form);
    },
  });
}
