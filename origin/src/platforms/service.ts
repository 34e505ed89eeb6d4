import { API_KEY_PREFIX, ProblemError, sha256Hex } from '@vip/shared-schema';
import type { Database } from '../db/client.js';
import type { PlatformRow } from '../db/schema.js';
import type { WakeSignal } from '../loops/wake-signal.js';
import type { Runtime } from '../runtime.js';
import { publishApiKey } from './publish.js';
import * as store from './store.js';

export interface PlatformServiceDeps {
  db: Database;
  runtime: Runtime;
  outbox: WakeSignal;
}

/** Characters of the key (after `vip_`) kept for display: enough to tell keys apart, useless to an attacker. */
const DISPLAY_PREFIX_LENGTH = 8;

export class PlatformService {
  constructor(private readonly deps: PlatformServiceDeps) {}

  async createPlatform(name: string) {
    const { db, runtime } = this.deps;
    const row = await store.insertPlatform(db, { id: runtime.newId(), name, createdAt: runtime.clock.now() });
    if (!row) throw new ProblemError('conflict', `A platform named ${JSON.stringify(name)} exists.`);
    return toPlatform(row);
  }

  async listPlatforms() {
    return { platforms: (await store.listPlatforms(this.deps.db)).map(toPlatform) };
  }

  /** The platform of a live API key, by the key's SHA-256 (the guards' `ApiKeyLookup`). */
  platformOfKey(keyHash: string) {
    return store.platformOfKey(this.deps.db, keyHash);
  }

  /** The key is returned here and nowhere else; only its SHA-256 is kept, and the edge learns it in the same commit. */
  async createApiKey(platformId: string) {
    const { db, runtime } = this.deps;
    const secret = Buffer.from(runtime.randomBytes(32)).toString('base64url');
    const apiKey = `${API_KEY_PREFIX}${secret}`;
    const keyHash = await sha256Hex(apiKey);
    const now = runtime.clock.now();
    const row = await db.transaction(async (tx) => {
      const platform = await store.findPlatform(tx, platformId);
      if (!platform) return null;
      const key = await store.insertApiKey(tx, {
        id: runtime.newId(),
        platformId,
        keyHash,
        prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH),
        createdAt: now,
      });
      await publishApiKey(tx, key, platform.name, false, now);
      return key;
    });
    if (!row) throw new ProblemError('not_found', 'No such platform.');
    this.deps.outbox.nudge();
    return { key_id: row.id, api_key: apiKey, created_at: row.createdAt.toISOString() };
  }

  async listApiKeys(platformId: string) {
    const { db } = this.deps;
    if (!(await store.findPlatform(db, platformId))) throw new ProblemError('not_found', 'No such platform.');
    const rows = await store.listApiKeys(db, platformId);
    return {
      api_keys: rows.map((row) => ({
        key_id: row.id,
        platform_id: row.platformId,
        prefix: `${API_KEY_PREFIX}${row.prefix}`,
        created_at: row.createdAt.toISOString(),
        revoked_at: row.revokedAt?.toISOString() ?? null,
      })),
    };
  }

  /** Revoking twice is not an error: the key is revoked either way, and no second update is published. */
  async revokeApiKey(platformId: string, keyId: string) {
    const { db, runtime } = this.deps;
    const now = runtime.clock.now();
    const outcome = await db.transaction(async (tx) => {
      const key = await store.lockApiKey(tx, platformId, keyId);
      if (!key) return 'missing' as const;
      if (key.revokedAt) return 'already' as const;
      const platform = await store.findPlatform(tx, platformId);
      await store.markApiKeyRevoked(tx, keyId, now);
      await publishApiKey(tx, key, platform!.name, true, now);
      return 'revoked' as const;
    });
    if (outcome === 'missing') throw new ProblemError('not_found', 'No such API key on this platform.');
    if (outcome === 'revoked') this.deps.outbox.nudge();
    return { key_id: keyId, revoked: true as const };
  }
}

const toPlatform = (row: PlatformRow) => ({ platform_id: row.id, name: row.name, created_at: row.createdAt.toISOString() });
