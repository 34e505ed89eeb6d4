import { compareVoicesRoute } from '@vip/shared-schema/routes/origin-voices';
import type { FastifyInstance } from 'fastify';
import type { Guards } from '../auth/guard.js';
import type { Database } from '../db/client.js';
import { readMultipartForm } from '../http/multipart-form.js';
import { addRoute, type ContractRegistry } from '../http/routes.js';
import { callerOf, platformOrUserGuard } from '../platforms/caller-guard.js';
import type { DetectionService } from './service.js';

/** Call inside a scope that has @fastify/multipart registered (see server.ts). */
export function registerDetectionRoutes(
  app: FastifyInstance,
  registry: ContractRegistry,
  guards: Guards,
  db: Database,
  detection: DetectionService,
): void {
  addRoute(app, registry, compareVoicesRoute, {
    guards: [platformOrUserGuard(db, guards)],
    handler: async (_input, request) => {
      const form = await readMultipartForm(request, { files: { audio1: { maxCount: 1 }, audio2: { maxCount: 1 } }, fields: ['voice_id'] });
      return detection.compare(callerOf(request), form);
    },
  });
}
