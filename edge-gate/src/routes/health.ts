import type { EdgeLiveness } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { MountRecord } from '../http/mount-record.js';

/** For probes: answers from the parsed settings alone, so a probe never costs a storage read or a rate-limit slot. */
export function mountHealth(mounts: MountRecord) {
  mounts.serve(edgeRoutes.health, (c) => {
    const { variant, instanceId } = c.get('config');
    return c.json({ status: 'ok', variant, instance: instanceId } satisfies EdgeLiveness);
  });
}
