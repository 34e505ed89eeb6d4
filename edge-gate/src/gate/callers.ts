import { type AuditRecord, auditCaller, hmacSha256, platformNameMismatch, toHex } from '@vip/shared-schema';
import type { Caller } from '../auth/caller.js';
import type { EdgeConfig } from '../config.js';
import { shardOfKey } from './audit-shards.js';
import type { Limit } from './rate-window.js';

/** Credentials get the per-minute quota; anonymous callers (Variant B) the per-IP hourly one. */
export function gateLimit(config: EdgeConfig, caller: Caller, route: 'gate' | 'redeem'): Limit {
  const calls = route === 'gate' ? 'gate checks' : 'redemptions';
  if (caller.kind === 'anonymous') {
    return {
      key: `${route}:ip:${caller.ip}`,
      counted: `unauthenticated ${calls} from this address`,
      quota: config.limits.publicGatePerHour,
      windowSeconds: 3600,
    };
  }
  const id = caller.kind === 'platform' ? `key:${caller.key_id}` : `user:${caller.user_id}`;
  const counted = `${calls} ${caller.kind === 'platform' ? 'with this API key' : 'by this account'}`;
  return { key: `${route}:${id}`, counted, quota: config.limits.gatePerMinute, windowSeconds: 60 };
}

/**
 * The caller's home CallerHome shard: it counts every limit of the caller (gate and redemption)
 * and, for an API key, holds the key's revocation state, authoritative over the KV index copy.
 */
export interface Home {
  shard: number;
  /** The API key's hash when the caller is a platform: the shard refuses it once revoked. */
  keyHash: string | null;
}

/** The home shard of an API key, by its hash (index sync addresses it so). */
export const homeShardOfKey = (keyHash: string) => shardOfKey(`key:${keyHash}`);

export function homeOf(caller: Caller): Home {
  if (caller.kind === 'platform') return { shard: homeShardOfKey(caller.key_hash), keyHash: caller.key_hash };
  return { shard: shardOfKey(caller.kind === 'user' ? `user:${caller.user_id}` : `ip:${caller.ip}`), keyHash: null };
}

/**
 * Why this caller may not ask in `platformName`'s name, or null when it may. An API key speaks for
 * its own platform only. A user token is the spec's first-party caller: only an administrator's
 * may name a platform, or any logged-in user could learn which platforms hold licences for a voice
 * and collect approvals in their names. Anonymous Variant B callers are the public gate.
 */
export function platformRefusal(caller: Caller, platformName: string): string | null {
  if (caller.kind === 'platform') return platformNameMismatch(caller.platform_name, platformName);
  if (caller.kind === 'user' && caller.role !== 'admin') {
    return "Only an administrator's token may ask in a platform's name; a platform uses its own API key.";
  }
  return null;
}

/** The holder of a token issued to an anonymous caller: anyone may redeem it. */
const ANYONE = 'anonymous';

/** Who may redeem a token issued to this caller (its `azp`): the same platform or user; anyone for anonymous. */
export const holderOf = (caller: Caller): string =>
  caller.kind === 'platform' ? `platform:${caller.platform_name}` : caller.kind === 'user' ? `user:${caller.user_id}` : ANYONE;

/** Whether this caller may redeem a token held by `holder` (the token's `azp`). */
export const mayRedeem = (caller: Caller, holder: string): boolean => holder === ANYONE || holder === holderOf(caller);

/** The audit names a caller without secrets; an anonymous IP only as a keyed hash. */
export async function auditedCaller(config: EdgeConfig, caller: Caller): Promise<Pick<AuditRecord, 'caller_type' | 'caller_id'>> {
  if (caller.kind === 'platform') return auditCaller({ type: 'api_key', keyId: caller.key_id });
  if (caller.kind === 'user') return auditCaller({ type: 'user', userId: caller.user_id });
  const ipHash = toHex(await hmacSha256(config.internalSecret, `ip:${caller.ip}`)).slice(0, 32);
  return auditCaller({ type: 'anonymous', addressHash: `ip:${ipHash}` });
}
