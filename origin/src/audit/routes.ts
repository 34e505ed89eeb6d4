import {
  auditCheckpointKeysRoute,
  auditCheckpointsRoute,
  auditLogRoute,
  auditVerifyRoute,
  latestAuditCheckpointRoute,
} from '@vip/shared-schema/routes/origin/audit';
import { addRoute, type RouteKit } from '../http/routes.js';
import { readerOf } from './readers.js';
import type { AuditService } from './service.js';

export function registerAuditRoutes({ app, registry, guards }: RouteKit, audit: AuditService): void {
  addRoute(app, registry, auditLogRoute, {
    guards: [guards.platformOrUser],
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
