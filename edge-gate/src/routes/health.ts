import { type EdgeLiveness, routerPath } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';

/** For probes: answers from the parsed settings alone, so a probe never costs a storage read or a rate-limit slot. */
export function mountHealth(app: Hono<AppEnv>) {
  app.get(routerPath(edgeRoutes.health), (c) => {
    return c.json({ status: 'ok', variant: c.get('config').variant } satisfies EdgeLiveness);
  });
}
