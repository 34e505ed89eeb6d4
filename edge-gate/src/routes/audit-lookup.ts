import type { AuditLookupResponse } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { requireInternalSignature } from '../http/internal-signature.js';
import { internalBodyLimit, parseJsonText } from '../http/json-body.js';
import type { MountRecord } from '../http/mount-record.js';
import { heldRecord } from '../objects/caller-home-client.js';

const contract = edgeRoutes.auditLookup;

/**
 * Origin -> edge: whether a check this edge decided waits here for the origin's next pull, and
 * whose it is, so the origin answers a receipt asked for too early `receipt_pending`.
 */
export function mountAuditLookup(mounts: MountRecord) {
  mounts.serve(contract, internalBodyLimit, async (c) => {
    const raw = await c.req.text();
    await requireInternalSignature(c, raw);
    const { check_id } = parseJsonText(c, raw, contract.body);
    return c.json((await heldRecord(c.env, check_id.toLowerCase())) satisfies AuditLookupResponse);
  });
}
