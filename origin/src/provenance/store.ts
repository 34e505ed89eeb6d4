import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { type SigningCertificateRow, signingCertificates } from '../db/schema.js';
import { platformNamesById } from '../platforms/index.js';

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
  const [certificate] = await db.select().from(signingCertificates).where(eq(signingCertificates.id, certificateId));
  const platformName = certificate && (await platformNamesById(db, [certificate.platformId])).get(certificate.platformId);
  return certificate && platformName !== undefined ? { certificate, platformName } : null;
}

export async function revokeCertificate(db: Executor, certificateId: string, now: Date): Promise<void> {
  await db
    .update(signingCertificates)
    .set({ revokedAt: now })
    .where(and(eq(signingCertificates.id, certificateId), isNull(signingCertificates.revokedAt)));
}

/** Every live (unrevoked) certificate with its platform's name: the trust anchors of a verification. */
export async function liveCertificates(db: Executor): Promise<{ pem: string; platformName: string }[]> {
  const rows = await db
    .select({ pem: signingCertificates.pem, platformId: signingCertificates.platformId })
    .from(signingCertificates)
    .where(isNull(signingCertificates.revokedAt));
  const names = await platformNamesById(db, [...new Set(rows.map((row) => row.platformId))]);
  return rows.flatMap(({ pem, platformId }) => {
    const platformName = names.get(platformId);
    return platformName === undefined ? [] : [{ pem, platformName }];
  });
}
