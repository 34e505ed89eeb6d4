import { routerPath } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { Hono } from 'hono';
import { signingKeys } from '../gate/authorization-token.js';
import type { AppEnv } from '../http/context.js';

/** Public half of the authorization-token key, so platforms can check tokens themselves. */
export function mountJwks(app: Hono<AppEnv>) {
  app.get(routerPath(edgeRoutes.jwks), async (c) => {
    const { publicJwk } = await signingKeys(c.get('config'));
    c.header('cache-control', 'public, max-age=300');
    return c.json({ keys: [publicJwk] });
  });
}
