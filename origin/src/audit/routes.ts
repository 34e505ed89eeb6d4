import {
  auditCheckpointKeysRoute,
  auditCheckpointsRoute,
  auditLogRoute,
  auditVerifyRoute,
  latestAuditCheckpointRoute,
} from '@vip/shared-schema/routes/origin-audit';
import type { FastifyInstance } from 'fastify';
import type { Guards } from '../auth/guard.js';
import type { Database } from '../db/client.js';
import { addRoute, type ContractRegistry } from '../http/routes.js';
import { platformOrUserGuard } from '../platforms/caller-guard.js';
import { readerOf } from './readers.js';
import type { AuditService } from './service.js';

export function registerAuditRoutes(
  app: FastifyInstance,
  registry: ContractRegistry,
  db: Database,
  guards: Guards,
  audit: AuditService,
): void {
  addRoute(app, registry, auditLogRoute, {
    guards: [platformOrUserGuard(db, guards)],
    handler: ({ query }, request) => audit.list(readerOf(request), query),
  });

  addRoute(app, registry, auditVerifyRoute, {
    guards: guards.admin,
    handler: ({ query }) => audit.verify(query),
  });

  addRoute(app, registry, auditCheckpointsRoute, {
    handler: ({ query }) => audit.listCheckpoints(query.limit),
  });

  addRoute(app, registry, latestAuditCheckpointRoute, {
    handler: () => audit.latestCheckpoint(),
  });

  addRoute(app, registry, auditCheckpointKeysRoute, {
    handler: () => audit.checkpointKeys() as { keys: { kty: string; crv: string; x: string; kid: string; alg: string; use: string }[] },
  });
}
