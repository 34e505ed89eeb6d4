import { API_KEY_PREFIX, ProblemError, sha256Hex } from '@vip/shared-schema';
import { readApiKey } from '../edge-index/api-keys.js';
import type { Caller } from './caller.js';

const MAX_KEY_LENGTH = 256;

/**
 * `X-API-Key`: hashed, looked up in the edge index; unknown, revoked or deleted keys are all 401.
 * The index copy may be older than a revocation (see edge-index/read-cache.ts): every route that
 * takes API keys also asks the key's home CallerHome shard, which knows revocations at once.
 */
export async function platformFromApiKey(kv: KVNamespace, apiKey: string): Promise<Extract<Caller, { kind: 'platform' }>> {
  // Built only when refusing: an Error captures a stack trace, too dear for every request.
  const invalid = () => new ProblemError('invalid_credentials', 'The API key is not valid.');
  if (!apiKey.startsWith(API_KEY_PREFIX) || apiKey.length > MAX_KEY_LENGTH) throw invalid();
  const keyHash = await sha256Hex(apiKey);
  const stored = await readApiKey(kv, keyHash);
  if (!stored?.record || stored.record.revoked) throw invalid();
  const { platform_name, platform_id, key_id } = stored.record;
  return { kind: 'platform', platform_name, platform_id, key_id, key_hash: keyHash };
}
