import { auditReceiptRoute, tlogCheckpointRoute, tlogTileRoute, tlogVerifierKeyRoute } from '@vip/shared-schema/routes/origin/audit';
import { addRoute, type RouteKit } from '../http/routes.js';
import { readerOf } from './readers.js';
import type { TransparencyLog } from './tlog-service.js';

/** A tile never changes once served (a partial tile of width W is a prefix of every later one). */
const IMMUTABLE = { 'cache-control': 'public, max-age=31536000, immutable' };

export function registerTlogRoutes({ app, registry, guards }: RouteKit, tlog: TransparencyLog): void {
  addRoute(app, registry, auditReceiptRoute, {
    guards: [guards.platformOrUser],
    handler: ({ params }, request) => tlog.receipt(readerOf(request), params.check_id),
  });

  addRoute(app, registry, tlogCheckpointRoute, {
    handler: () => tlog.latestCheckpoint(),
    headers: { 'cache-control': 'no-cache' },
  });

  addRoute(app, registry, tlogVerifierKeyRoute, {
    handler: () => tlog.verifierKey(),
  });

  addRoute(app, registry, tlogTileRoute, {
    url: '/tlog/tile/*',
    handler: ({ params }) => tlog.tile(params.tile),
    headers: IMMUTABLE,
  });
}
