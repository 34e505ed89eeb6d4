import type { AuditLookupResponse, AuditPullResponse, AuditRecord, EdgeAuditRecord, SyncUpdate } from '@vip/shared-schema';
import { AUDIT_SHARDS, shardOf } from '../gate/audit-shards.js';
import { type Home, homeShardOfKey } from '../gate/callers.js';
import type { ShardAdmission } from '../gate/outcomes.js';
import type { Limit } from '../gate/rate-window.js';

/** The CallerHome shard at `index` (0 … AUDIT_SHARDS - 1). */
export function callerHomeShard(env: Env, index: number) {
  return env.CALLER_HOME.get(env.CALLER_HOME.idFromName(`caller-home-${index}`));
}

/** Resolves once the record is durable at the edge; only then may the caller get its answer. */
export async function recordDecision(env: Env, record: EdgeAuditRecord): Promise<void> {
  await callerHomeShard(env, shardOf(record.check_id)).append(record.check_id, JSON.stringify(record));
}

/**
 * Counts a request against `limit` in the caller's home shard, which first refuses a revoked API
 * key, and, when admitted, stores `record` (whose check_id must belong to that shard, see
 * `checkIdInShard`) in the same call and commit.
 */
export function admitInHomeShard(env: Env, home: Home, limit: Limit, nowMs: number, record: AuditRecord | null): Promise<ShardAdmission> {
  if (record && shardOf(record.check_id) !== home.shard) throw new Error('check_id is not in the caller’s home shard');
  // Sent as JSON, which the shard stores as it is: a string crosses to the object for less than the record would.
  const pending = record && { checkId: record.check_id, json: JSON.stringify(record) };
  return callerHomeShard(env, home.shard).admit(limit.key, limit.quota, limit.windowSeconds, nowMs, pending, home.keyHash);
}

/** Hands an API key's revocation state to its home shard, which the gate asks on every request. */
export function applyKeyUpdate(env: Env, update: Extract<SyncUpdate, { kind: 'api_key' }>): Promise<'applied' | 'stale'> {
  const revoked = update.record === null || update.record.revoked;
  return callerHomeShard(env, homeShardOfKey(update.key_hash)).applyKeyUpdate(update.key_hash, update.version, revoked);
}

/**
 * Acknowledges `ack` in the shards that hold them and returns the oldest pending records of every
 * shard, ordered by decision time, at most `limit`.
 */
export async function pullPending(env: Env, ack: readonly string[], limit: number): Promise<AuditPullResponse> {
  const acksByShard = Array.from({ length: AUDIT_SHARDS }, () => [] as string[]);
  for (const checkId of ack) acksByShard[shardOf(checkId)]!.push(checkId);
  const pulls = await Promise.all(acksByShard.map((acks, shard) => callerHomeShard(env, shard).pull(acks, limit)));
  const records = pulls
    .flatMap((pull) => pull.records)
    .sort((a, b) => a.decided_at.localeCompare(b.decided_at))
    .slice(0, limit);
  return { acked: pulls.reduce((sum, pull) => sum + pull.acked, 0), records };
}

/** Whose a check is that this edge decided and the origin has not acknowledged: what visibility needs, or null. */
export async function heldRecord(env: Env, checkId: string): Promise<AuditLookupResponse> {
  const record = await callerHomeShard(env, shardOf(checkId)).held(checkId);
  if (!record) return { held: null };
  const { voice_id, platform_name, caller_type, caller_id } = record;
  return { held: { voice_id, platform_name, caller_type, caller_id } };
}
