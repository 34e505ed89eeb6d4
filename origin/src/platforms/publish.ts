import type { Database, Executor } from '../db/client.js';
import { enqueueEdgeUpdate } from '../edge-link/outbox-store.js';
import { apiKeysAfter } from './store.js';

/** Keys republished per page (one insert each, no lock held across pages). */
const REPUBLISH_PAGE = 500;

interface PublishedKey {
  id: string;
  platformId: string;
  keyHash: string;
}

/**
 * Queues what the edge index holds of an API key: its platform, by the key's SHA-256, and whether it
 * still opens the gate. Call it in the transaction that changed the key.
 */
export function publishApiKey(db: Executor, key: PublishedKey, platformName: string, revoked: boolean, now: Date): Promise<number> {
  return enqueueEdgeUpdate(
    db,
    {
      kind: 'api_key',
      key_hash: key.keyHash,
      record: { key_id: key.id, platform_id: key.platformId, platform_name: platformName, revoked },
    },
    now,
  );
}

/**
 * Publishes every API key's record again, revoked ones included (`npm run edge:republish`, beside
 * the voices). Returns how many keys were queued.
 */
export async function republishApiKeys(db: Database, now: Date): Promise<number> {
  let count = 0;
  for (
    let page = await apiKeysAfter(db, null, REPUBLISH_PAGE);
    page.length > 0;
    page = await apiKeysAfter(db, page.at(-1)!.id, REPUBLISH_PAGE)
  ) {
    for (const key of page) await publishApiKey(db, key, key.platformName, key.revokedAt !== null, now);
    count += page.length;
  }
  return count;
}
