import { ProblemError } from '@vip/shared-schema';
import { licensingPageRoute } from '@vip/shared-schema/routes/origin-registry';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/client.js';
import { addRoute, type ContractRegistry } from '../http/routes.js';
import { findVoice } from '../voice-index/store.js';
import { renderLicensingPage } from './render.js';

/** Public: the page the gate's `license_url` points at. An unknown voice is a 404 problem, like any other lookup. */
export function registerLicensingPageRoutes(app: FastifyInstance, registry: ContractRegistry, db: Database): void {
  addRoute(app, registry, licensingPageRoute, {
    handler: async ({ query }) => {
      const voice = await findVoice(db, query.voice_id);
      if (!voice) throw new ProblemError('not_found', 'No voice is registered under this id.');
      return renderLicensingPage({ voiceId: voice.id, name: voice.name });
    },
  });
}
