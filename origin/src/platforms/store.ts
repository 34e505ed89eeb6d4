import { and, asc, eq, gt, inArray } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { type ApiKeyRow, apiKeys, type PlatformRow, platforms } from '../db/schema.js';

/** Inserts unless the name is taken; answers null when it is. */
export async function insertPlatform(db: Executor, platform: typeof platforms.$inferInsert): Promise<PlatformRow | null> {
  const [row] = await db.insert(platforms).values(platform).onConflictDoNothing({ target: platforms.name }).returning();
  return row ?? null;
}

export function listPlatforms(db: Executor): Promise<PlatformRow[]> {
  return db.select().from(platforms).orderBy(asc(platforms.createdAt), asc(platforms.name));
}

export async function findPlatform(db: Executor, id: string): Promise<PlatformRow | null> {
  const [row] = await db.select().from(platforms).where(eq(platforms.id, id));
  return row ?? null;
}

/** The names of the platforms of `ids` that exist, by id. */
export async function platformNamesById(db: Executor, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: platforms.id, name: platforms.name })
    .from(platforms)
    .where(inArray(platforms.id, [...ids]));
  return new Map(rows.map((row) => [row.id, row.name]));
}

export async function platformExists(db: Executor, name: string): Promise<boolean> {
  const [row] = await db.select({ id: platforms.id }).from(platforms).where(eq(platforms.name, name));
  return row !== undefined;
}

export async function insertApiKey(db: Executor, key: typeof apiKeys.$inferInsert): Promise<ApiKeyRow> {
  const [row] = await db.insert(apiKeys).values(key).returning();
  return row!;
}

export function listApiKeys(db: Executor, platformId: string): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).where(eq(apiKeys.platformId, platformId)).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
}

/** Locks the key's row for the rest of the transaction, so its outbox versions follow commit order. */
export async function lockApiKey(db: Executor, platformId: string, keyId: string): Promise<ApiKeyRow | null> {
  const [row] = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.platformId, platformId)))
    .for('update');
  return row ?? null;
}

export async function markApiKeyRevoked(db: Executor, keyId: string, now: Date): Promise<void> {
  await db.update(apiKeys).set({ revokedAt: now }).where(eq(apiKeys.id, keyId));
}

/** API keys in id order after `afterId` (from the start when null), each with its platform's name. */
export function apiKeysAfter(db: Executor, afterId: string | null, limit: number) {
  return db
    .select({
      id: apiKeys.id,
      platformId: apiKeys.platformId,
      keyHash: apiKeys.keyHash,
      revokedAt: apiKeys.revokedAt,
      platformName: platforms.name,
    })
    .from(apiKeys)
    .innerJoin(platforms, eq(platforms.id, apiKeys.platformId))
    .where(afterId === null ? undefined : gt(apiKeys.id, afterId))
    .orderBy(asc(apiKeys.id))
    .limit(limit);
}

/** The platform of a live API key, and the key's id, by the key's SHA-256. */
export async function platformOfKey(db: Executor, keyHash: string): Promise<{ platformName: string; keyId: string } | null> {
  const [row] = await db
    .select({ name: platforms.name, keyId: apiKeys.id, revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .innerJoin(platforms, eq(platforms.id, apiKeys.platformId))
    .where(eq(apiKeys.keyHash, keyHash));
  return row && !row.revokedAt ? { platformName: row.name, keyId: row.keyId } : null;
}

export async function platformIdByName(db: Executor, name: string): Promise<string | null> {
  const [row] = await db.select({ id: platforms.id }).from(platforms).where(eq(platforms.name, name));
  return row?.id ?? null;
}
