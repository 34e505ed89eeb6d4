import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { auditEntries, platforms, signingCertificates, voices } from '../db/schema.js';

export type SigningCertificateRow = typeof signingCertificates.$inferSelect;

export async function platformIdByName(db: Executor, name: string): Promise<string | null> {
  const [row] = await db.select({ id: platforms.id }).from(platforms).where(eq(platforms.name, name));
  return row?.id ?? null;
}

export async function insertCertificate(db: Executor, row: typeof signingCertificates.$inferInsert): Promise<SigningCertificateRow | null> {
  const [inserted] = await db.insert(signingCertificates).values(row).onConflictDoNothing().returning();
  return inserted ?? null;
}

export async function countCertificatesOfPlatform(db: Executor, platformId: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(signingCertificates)
    .where(eq(signingCertificates.platformId, platformId));
  return row?.count ?? 0;
}

export function certificatesOfPlatform(db: Executor, platformId: string): Promise<SigningCertificateRow[]> {
  return db
    .select()
    .from(signingCertificates)
    .where(eq(signingCertificates.platformId, platformId))
    .orderBy(desc(signingCertificates.createdAt), desc(signingCertificates.id));
}

export async function certificateWithPlatform(db: Executor, certificateId: string) {
  const [row] = await db
    .select({ certificate: signingCertificates, platformName: platforms.name })
    .from(signingCertificates)
    .innerJoin(platforms, eq(platforms.id, signingCertificates.platformId))
    .where(eq(signingCertificates.id, certificateId));
  return row ?? null;
}

export async function revokeCertificate(db: Executor, certificateId: string, now: Date): Promise<void> {
  await db
    .update(signingCertificates)
    .set({ revokedAt: now })
    .where(and(eq(signingCertificates.id, certificateId), isNull(signingCertificates.revokedAt)));
}

/** Every live (unrevoked) certificate with its platform's name: the trust anchors of a verification. */
export function liveCertificates(db: Executor): Promise<{ pem: string; platformName: string }[]> {
  return db
    .select({ pem: signingCertificates.pem, platformName: platforms.name })
    .from(signingCertificates)
    .innerJoin(platforms, eq(platforms.id, signingCertificates.platformId))
    .where(isNull(signingCertificates.revokedAt));
}

/** Whether the token a gate decision issued was redeemed: its `authorization.redeemed` entry that allowed it. */
export async function redemptionLogged(db: Executor, voiceId: string, tokenJti: string): Promise<boolean> {
  const [row] = await db
    .select({ seq: auditEntries.seq })
    .from(auditEntries)
    .where(
      and(
        eq(auditEntries.voiceId, voiceId),
        eq(auditEntries.decision, 'allow'),
        sql`(${auditEntries.entryJson}::jsonb ->> 'kind') = 'authorization.redeemed'`,
        sql`(${auditEntries.entryJson}::jsonb ->> 'token_jti') = ${tokenJti}`,
      ),
    )
    .limit(1);
  return row !== undefined;
}

export async function voiceStanding(db: Executor, voiceId: string) {
  const [row] = await db
    .select({ ownerId: voices.ownerId, status: voices.status, consentStatus: voices.consentStatus, speechSeconds: voices.speechSeconds })
    .from(voices)
    .where(eq(voices.id, voiceId));
  return row ?? null;
}
