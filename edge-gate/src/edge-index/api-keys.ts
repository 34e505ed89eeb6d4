import { type ApiKeyIndexRecord, kvKeys, type SyncUpdate } from '@vip/shared-schema';
import { API_KEY_MISS_TTL_MS, API_KEY_READ_TTL_MS, INDEX_READ_MAX_ENTRIES, ReadCache } from './read-cache.js';

/**
 * API keys in the edge index, by SHA-256 of the key. A revoked or deleted key stays as a versioned
 * tombstone, so an older update replayed later cannot bring it back.
 */
export interface StoredApiKey {
  version: number;
  record: ApiKeyIndexRecord | null;
}

const recentReads = new ReadCache<StoredApiKey | null>(
  (stored) => (stored?.record ? API_KEY_READ_TTL_MS : API_KEY_MISS_TTL_MS),
  INDEX_READ_MAX_ENTRIES,
);

/** The gate's read: may be shared with other requests of this isolate (see read-cache.ts). */
export function readApiKey(kv: KVNamespace, keyHash: string): Promise<StoredApiKey | null> {
  return recentReads.get(keyHash, () => readApiKeyFromKv(kv, keyHash));
}

async function readApiKeyFromKv(kv: KVNamespace, keyHash: string): Promise<StoredApiKey | null> {
  return kv.get<StoredApiKey>(kvKeys.apiKey(keyHash), 'json');
}

type ApiKeyUpdate = Extract<SyncUpdate, { kind: 'api_key' }>;

export async function applyApiKeyUpdate(kv: KVNamespace, update: ApiKeyUpdate): Promise<'applied' | 'stale'> {
  const current = await readApiKeyFromKv(kv, update.key_hash);
  if (current && current.version >= update.version) return 'stale';
  const stored: StoredApiKey = { version: update.version, record: update.record };
  await kv.put(kvKeys.apiKey(update.key_hash), JSON.stringify(stored));
  recentReads.forget(update.key_hash);
  return 'applied';
}
