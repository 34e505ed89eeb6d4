import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { signingKeys } from '../gate/authorization-token.js';
import type { MountRecord } from '../http/mount-record.js';

/** Public half of the authorization-token key, so platforms can check tokens themselves. */
export function mountJwks(mounts: MountRecord) {
  mounts.serve(edgeRoutes.jwks, async (c) => {
    const { publicJwk } = await signingKeys(c.get('config'));
    c.header('cache-control', 'public, max-age=300');
    return c.json({ keys: [publicJwk] });
  });
}
