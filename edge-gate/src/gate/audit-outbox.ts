import type { AuditRecord } from '@vip/shared-schema';
import type { Env } from '../env.js';

/** Audit records are spread over a fixed set of outbox objects; a check_id always maps to one. */
export const AUDIT_SHARDS = 8;

export function outboxShard(env: Env, index: number) {
  return env.AUDIT_OUTBOX.get(env.AUDIT_OUTBOX.idFromName(`audit-outbox-${index}`));
}

/** check_ids are random UUIDs, so their first hex digits spread records evenly. */
export const shardOf = (checkId: string) => Number.parseInt(checkId.slice(0, 4), 16) % AUDIT_SHARDS;

/** Resolves once the record is durable at the edge; only then may the caller get its answer. */
export async function recordDecision(env: Env, record: AuditRecord): Promise<void> {
  await outboxShard(env, shardOf(record.check_id)).append(record);
}
