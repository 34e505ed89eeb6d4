import type { UserRole } from '@vip/shared-schema';
import { and, count, eq, gte, inArray, isNull, lt, min } from 'drizzle-orm';
import type { Database, Executor } from '../db/client.js';
import { loginFailures, type RefreshTokenRow, refreshTokens, type UserRow, users } from '../db/schema.js';

/** Inserts unless the email is taken; answers null when it is. */
export async function insertUser(db: Executor, user: typeof users.$inferInsert): Promise<UserRow | null> {
  const [row] = await db.insert(users).values(user).onConflictDoNothing({ target: users.email }).returning();
  return row ?? null;
}

export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | null> {
  const [row] = await db.select().from(users).where(eq(users.email, email));
  return row ?? null;
}

export async function findUserById(db: Executor, id: string): Promise<UserRow | null> {
  const [row] = await db.select().from(users).where(eq(users.id, id));
  return row ?? null;
}

export async function setUserRole(db: Executor, id: string, role: UserRole): Promise<void> {
  await db.update(users).set({ role }).where(eq(users.id, id));
}

export async function insertRefreshToken(db: Executor, token: typeof refreshTokens.$inferInsert): Promise<void> {
  await db.insert(refreshTokens).values(token);
}

export async function findRefreshTokenByHash(db: Executor, tokenHash: string): Promise<RefreshTokenRow | null> {
  const [row] = await db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, tokenHash));
  return row ?? null;
}

/** Spends a token; false when someone else spent or revoked it first. */
export async function markRefreshTokenUsed(db: Executor, id: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(refreshTokens)
    .set({ usedAt: now })
    .where(and(eq(refreshTokens.id, id), isNull(refreshTokens.usedAt), isNull(refreshTokens.revokedAt)))
    .returning({ id: refreshTokens.id });
  return rows.length === 1;
}

export async function revokeRefreshFamily(db: Executor, familyId: string, now: Date): Promise<void> {
  await db
    .update(refreshTokens)
    .set({ revokedAt: now })
    .where(and(eq(refreshTokens.familyId, familyId), isNull(refreshTokens.revokedAt)));
}

export interface FailureWindow {
  subject: string;
  failures: number;
  oldest: Date | null;
}

export async function countLoginFailures(db: Executor, subjects: string[], since: Date): Promise<FailureWindow[]> {
  const rows = await db
    .select({ subject: loginFailures.subject, failures: count(), oldest: min(loginFailures.failedAt) })
    .from(loginFailures)
    .where(and(inArray(loginFailures.subject, subjects), gte(loginFailures.failedAt, since)))
    .groupBy(loginFailures.subject);
  return subjects.map((subject) => {
    const row = rows.find((r) => r.subject === subject);
    return { subject, failures: row?.failures ?? 0, oldest: row?.oldest ? new Date(row.oldest) : null };
  });
}

/** Records failures and forgets those that left the window, so the table stays as small as the window. */
export async function recordLoginFailure(db: Executor, subjects: string[], now: Date, windowStart: Date): Promise<void> {
  await db.insert(loginFailures).values(subjects.map((subject) => ({ subject, failedAt: now })));
  await db.delete(loginFailures).where(lt(loginFailures.failedAt, windowStart));
}

export async function clearLoginFailures(db: Executor, subject: string): Promise<void> {
  await db.delete(loginFailures).where(eq(loginFailures.subject, subject));
}

export async function setUserPassword(db: Executor, id: string, passwordHash: string): Promise<void> {
  await db.update(users).set({ passwordHash }).where(eq(users.id, id));
}

/**
 * A new password for the account, and every session ended (a change by the owner, or a reset by an
 * operator): whoever held a refresh token must sign in with the new password.
 */
export async function replacePassword(db: Database, userId: string, passwordHash: string, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    await setUserPassword(tx, userId, passwordHash);
    await revokeUserRefreshTokens(tx, userId, now);
  });
}

/** Every live refresh token of the account: all its sessions end at their next refresh. */
export async function revokeUserRefreshTokens(db: Executor, userId: string, now: Date): Promise<void> {
  await db
    .update(refreshTokens)
    .set({ revokedAt: now })
    .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)));
}
