/**
 * Which CallerHome shard holds what, pure arithmetic: a check_id always maps to one shard, and a
 * rate-limit key to its home shard, which counts it.
 */
export const AUDIT_SHARDS = 8;

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
