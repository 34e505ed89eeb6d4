import type { AuditRecord } from '@vip/shared-schema';
import type { Env } from '../env.js';
import type { RateDecision } from '../objects/RateLimiter.js';
import type { Limit } from './rate-limit.js';

/** Audit records are spread over a fixed set of outbox objects; a check_id always maps to one. */
export const AUDIT_SHARDS = 8;

export function outboxShard(env: Env, index: number) {
  return env.AUDIT_OUTBOX.get(env.AUDIT_OUTBOX.idFromName(`audit-outbox-${index}`));
}

/** check_ids are random UUIDs, so their first hex digits spread records evenly. */
export const shardOf = (checkId: string) => Number.parseInt(checkId.slice(0, 4), 16) % AUDIT_SHARDS;

/** The shard that counts a rate-limit key (FNV-1a of the key): always the same one for a key. */
export function shardOfKey(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % AUDIT_SHARDS;
}

/**
 * A random UUID moved onto `shard`: only the low bits of its first 16 are replaced (the version and
 * variant digits are untouched), so `shardOf` of the result is `shard` and it stays a v4 UUID.
 */
export function checkIdInShard(uuid: string, shard: number): string {
  const head = (Number.parseInt(uuid.slice(0, 4), 16) & ~(AUDIT_SHARDS - 1)) | shard;
  return head.toString(16).padStart(4, '0') + uuid.slice(4);
}

/** Resolves once the record is durable at the edge; only then may the caller get its answer. */
export async function recordDecision(env: Env, record: AuditRecord): Promise<void> {
  await outboxShard(env, shardOf(record.check_id)).append(record);
}

/**
 * Limit keys this isolate saw refused, with the end of their window: a hint only (the shard's
 * count is the answer), so that a caller over its limit is refused before costly work is done.
 */
const refusedUntil = new Map<string, number>();
const REFUSALS_REMEMBERED = 10_000;

/** Whether `key` was refused in this isolate in a window that has not ended at `nowMs`. */
export function recentlyRefused(key: string, nowMs: number): boolean {
  return (refusedUntil.get(key) ?? 0) > nowMs;
}

/**
 * Counts a request against `limit` in the key's shard and, when admitted, stores `record` (whose
 * check_id must belong to that shard, see `checkIdInShard`) in the same call and commit.
 */
export async function admitAndRecord(env: Env, limit: Limit, nowMs: number, record: AuditRecord | null): Promise<RateDecision> {
  if (record && shardOf(record.check_id) !== shardOfKey(limit.key)) throw new Error('check_id is not in the limit key’s shard');
  const decision = await outboxShard(env, shardOfKey(limit.key)).admit(limit.key, limit.quota, limit.windowSeconds, nowMs, record);
  if (decision.allowed) refusedUntil.delete(limit.key);
  else {
    if (refusedUntil.size >= REFUSALS_REMEMBERED) refusedUntil.clear();
    refusedUntil.set(limit.key, nowMs + decision.resetSeconds * 1000);
  }
  return decision;
}
