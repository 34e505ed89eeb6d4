import type { AuditPullResponse } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { requireInternalSignature } from '../http/internal-signature.js';
import { internalBodyLimit, parseJsonText } from '../http/json-body.js';
import type { MountRecord } from '../http/mount-record.js';
import { pullPending } from '../objects/caller-home-client.js';

const contract = edgeRoutes.auditPull;

/**
 * Origin <- edge audit hand-off: acknowledges what the origin appended, returns the oldest
 * pending records of every shard (ordered by decision time, at most `limit`).
 */
export function mountAuditPull(mounts: MountRecord) {
  mounts.serve(contract, internalBodyLimit, async (c) => {
    const raw = await c.req.text();
    await requireInternalSignature(c, raw);
    const { ack, limit } = parseJsonText(c, raw, contract.body);
    return c.json((await pullPending(c.env, ack, limit)) satisfies AuditPullResponse);
  });
}
