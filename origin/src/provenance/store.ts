import type { EdgeAuditRecord } from '@vip/shared-schema';
import { and, asc, desc, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import {
  type SigningCertificateRow,
  signingCertificates,
  type WatermarkMarkRow,
  watermarkManifests,
  watermarkMarks,
} from '../db/schema.js';
import { platformNamesById } from '../platforms/index.js';

export async function insertCertificate(db: Executor, row: typeof signingCertificates.$inferInsert): Promise<SigningCertificateRow | null> {
  const [inserted] = await db.insert(signingCertificates).values(row).onConflictDoNothing().returning();
  return inserted ?? null;
}

/**
 * Certificate registrations take turns (one transaction-scoped advisory lock; they are rare), so two
 * platforms registering the same CA, or a CA and a certificate it issued, cannot both find theirs free.
 */
export async function lockRegistrations(db: Executor): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(hashtext('signing-certificate-registration'))`);
}

/** Every certificate other platforms hold, live or revoked. */
export function certificatesOfOtherPlatforms(db: Executor, platformId: string): Promise<{ pem: string; fingerprint: string }[]> {
  return db
    .select({ pem: signingCertificates.pem, fingerprint: signingCertificates.fingerprint })
    .from(signingCertificates)
    .where(ne(signingCertificates.platformId, platformId));
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

/** Every registration of a watermark id, oldest first (the id is indexed, not unique: see watermarkMarks). */
export function marksOfId(db: Executor, watermarkId: string): Promise<WatermarkMarkRow[]> {
  return db
    .select()
    .from(watermarkMarks)
    .where(eq(watermarkMarks.watermarkId, watermarkId))
    .orderBy(asc(watermarkMarks.redeemedAt), asc(watermarkMarks.redemptionCheckId));
}

/** The manifest store a platform deposited for the mark of this redemption; null when none was. */
export async function depositedManifest(db: Executor, redemptionCheckId: string): Promise<Buffer | null> {
  const [row] = await db
    .select({ manifest: watermarkManifests.manifest })
    .from(watermarkManifests)
    .where(eq(watermarkManifests.redemptionCheckId, redemptionCheckId));
  return row?.manifest ?? null;
}

/** Which of these redemptions have a deposited manifest. */
export async function depositedManifestIds(db: Executor, redemptionCheckIds: readonly string[]): Promise<Set<string>> {
  if (redemptionCheckIds.length === 0) return new Set();
  const rows = await db
    .select({ id: watermarkManifests.redemptionCheckId })
    .from(watermarkManifests)
    .where(inArray(watermarkManifests.redemptionCheckId, [...redemptionCheckIds]));
  return new Set(rows.map((row) => row.id));
}

/**
 * Registers the watermark ids the edge minted at redemption (handed over beside the redemption's
 * audit record) to their redemption; a repeated delivery adds nothing.
 */
export async function registerMarks(db: Executor, records: readonly EdgeAuditRecord[]): Promise<void> {
  const marks = records.flatMap((record) =>
    record.kind === 'authorization.redeemed' &&
    record.action === 'redeemed' &&
    record.watermark_id &&
    record.voice_id &&
    record.platform_name &&
    record.intended_use &&
    record.token_jti
      ? [
          {
            redemptionCheckId: record.check_id,
            watermarkId: record.watermark_id,
            voiceId: record.voice_id,
            platformName: record.platform_name,
            intendedUse: record.intended_use,
            tokenJti: record.token_jti,
            redeemedAt: new Date(record.decided_at),
          },
        ]
      : [],
  );
  if (marks.length > 0) await db.insert(watermarkMarks).values(marks).onConflictDoNothing();
}
