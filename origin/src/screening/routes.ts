import { screenSampleRoute } from '@vip/shared-schema/routes/origin-voices';
import type { FastifyInstance } from 'fastify';
import type { Guards } from '../auth/guard.js';
import type { Database } from '../db/client.js';
import { readMultipartForm } from '../http/multipart-form.js';
import { addRoute, type ContractRegistry } from '../http/routes.js';
import { callerOf, platformOrUserGuard } from '../platforms/caller-guard.js';
import type { ScreeningService } from './service.js';

/** Call inside a scope that has @fastify/multipart registered (see server.ts). */
export function registerScreeningRoutes(
  app: FastifyInstance,
  registry: ContractRegistry,
  guards: Guards,
  db: Database,
  screening: ScreeningService,
): void {
  addRoute(app, registry, screenSampleRoute, {
    guards: [platformOrUserGuard(db, guards)],
    handler: async (_input, request) => {
      const caller = callerOf(request);
      await screening.admit(caller);
      const form = await readMultipartForm(request, { files: { audio: { maxCount: 1 } }, fields: ['platform_name'] });
      return screening.screen(caller, form);
    },
  });
}
