import type { FastifyInstance } from 'fastify';
import type { Guards } from '../auth/guard.js';
import type { Database } from '../db/client.js';
import type { OutboxSignal } from '../edge-sync/signal.js';
import type { ContractRegistry } from '../http/routes.js';
import { registerLicenseRoutes } from '../licenses/routes.js';
import { LicenseService } from '../licenses/service.js';
import { registerLicensingPageRoutes } from '../licensing-page/routes.js';
import type { Runtime } from '../runtime.js';
import { registerConsentRoutes } from '../synthesis-consent/routes.js';
import { ConsentService } from '../synthesis-consent/service.js';

export interface RegistryDeps {
  db: Database;
  runtime: Runtime;
  outbox: OutboxSignal;
}

/** The registry: the routes that change what a voice's edge index record says, and the public licensing page. */
export function registerRegistryRoutes(app: FastifyInstance, registry: ContractRegistry, guards: Guards, deps: RegistryDeps): void {
  registerConsentRoutes(app, registry, guards, new ConsentService(deps));
  registerLicenseRoutes(app, registry, guards, new LicenseService(deps));
  registerLicensingPageRoutes(app, registry, deps.db);
}
