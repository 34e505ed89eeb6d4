import { type AuditPullResponse, routerPath } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { Hono } from 'hono';
import { AUDIT_SHARDS, outboxShard, shardOf } from '../gate/audit-outbox.js';
import type { AppEnv } from '../http/context.js';
import { requireInternalSignature } from '../http/internal-signature.js';
import { internalBodyLimit, parseJsonText } from '../http/json-body.js';

const contract = edgeRoutes.auditPull;

/**
 * Origin <- edge audit hand-off: acknowledges what the origin appended, returns the oldest
 * pending records of every shard (ordered by decision time, at most `limit`).
 */
export function mountAuditPull(app: Hono<AppEnv>) {
  app.post(routerPath(contract), internalBodyLimit, async (c) => {
    const raw = await c.req.text();
    await requireInternalSignature(c, raw);
    const { ack, limit } = parseJsonText(c, raw, contract.body);
    const acksByShard = Array.from({ length: AUDIT_SHARDS }, () => [] as string[]);
    for (const checkId of ack) acksByShard[shardOf(checkId)]!.push(checkId);
    const pulls = await Promise.all(acksByShard.map((acks, shard) => outboxShard(c.env, shard).pull(acks, limit)));
    const records = pulls
      .flatMap((pull) => pull.records)
      .sort((a, b) => a.decided_at.localeCompare(b.decided_at))
      .slice(0, limit);
    return c.json({ acked: pulls.reduce((sum, pull) => sum + pull.acked, 0), records } satisfies AuditPullResponse);
  });
}
