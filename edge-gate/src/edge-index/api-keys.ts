import { type ApiKeyIndexRecord, kvKeys, type SyncUpdate } from '@vip/shared-schema';

/**
 * API keys in the edge index, by SHA-256 of the key. A revoked or deleted key stays as a versioned
 * tombstone, so an older update replayed later cannot bring it back.
 */
export interface StoredApiKey {
  version: number;
  record: ApiKeyIndexRecord | null;
}

export async function readApiKey(kv: KVNamespace, keyHash: string): Promise<StoredApiKey | null> {
  return kv.get<StoredApiKey>(kvKeys.apiKey(keyHash), 'json');
}

type ApiKeyUpdate = Extract<SyncUpdate, { kind: 'api_key' }>;

export async function applyApiKeyUpdate(kv: KVNamespace, update: ApiKeyUpdate): Promise<'applied' | 'stale'> {
  const current = await readApiKey(kv, update.key_hash);
  if (current && current.version >= update.version) return 'stale';
  const stored: StoredApiKey = { version: update.version, record: update.record };
  await kv.put(kvKeys.apiKey(update.key_hash), JSON.stringify(stored));
  return 'applied';
}
