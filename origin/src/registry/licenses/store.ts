import { and, asc, count, eq, gt, lte } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { type LicenseRow, licenses } from '../../db/schema.js';

export async function insertLicense(db: Executor, licence: typeof licenses.$inferInsert): Promise<LicenseRow> {
  const [row] = await db.insert(licenses).values(licence).returning();
  return row!;
}

export function listLicenses(db: Executor, voiceId: string): Promise<LicenseRow[]> {
  return db.select().from(licenses).where(eq(licenses.voiceId, voiceId)).orderBy(asc(licenses.createdAt), asc(licenses.id));
}

export async function countLicensesOfVoice(db: Executor, voiceId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(licenses).where(eq(licenses.voiceId, voiceId));
  return row?.n ?? 0;
}

/** Call after locking the voice: every registry change locks the voice first, then its licences. */
export async function lockLicense(db: Executor, voiceId: string, licenseId: string): Promise<LicenseRow | null> {
  const [row] = await db
    .select()
    .from(licenses)
    .where(and(eq(licenses.id, licenseId), eq(licenses.voiceId, voiceId)))
    .for('update');
  return row ?? null;
}

export async function updateLicense(
  db: Executor,
  licenseId: string,
  changes: Pick<
    Partial<LicenseRow>,
    'status' | 'expiresAt' | 'revokedAt' | 'description' | 'descriptionSource' | 'representedBy' | 'compensation'
  > & { updatedAt: Date },
): Promise<LicenseRow> {
  const [row] = await db.update(licenses).set(changes).where(eq(licenses.id, licenseId)).returning();
  return row!;
}

/** Voices with an active licence at or past its expiry; read without locks. */
export async function voicesWithDueLicenses(db: Executor, now: Date, limit: number): Promise<string[]> {
  const rows = await db
    .selectDistinct({ voiceId: licenses.voiceId })
    .from(licenses)
    .where(and(eq(licenses.status, 'active'), lte(licenses.expiresAt, now)))
    .limit(limit);
  return rows.map((row) => row.voiceId);
}

/** The voice's active licences at or past their expiry, locked; call after locking the voice. */
export function lockDueLicenses(db: Executor, voiceId: string, now: Date): Promise<LicenseRow[]> {
  return db
    .select()
    .from(licenses)
    .where(and(eq(licenses.voiceId, voiceId), eq(licenses.status, 'active'), lte(licenses.expiresAt, now)))
    .orderBy(asc(licenses.expiresAt), asc(licenses.id))
    .for('update');
}

/** Whether `platformName` holds a licence of this voice that is active and not yet expired at `now`. */
export async function holdsLiveLicense(db: Executor, voiceId: string, platformName: string, now: Date): Promise<boolean> {
  const [row] = await db
    .select({ id: licenses.id })
    .from(licenses)
    .where(
      and(
        eq(licenses.voiceId, voiceId),
        eq(licenses.platformName, platformName),
        eq(licenses.status, 'active'),
        gt(licenses.expiresAt, now),
      ),
    )
    .limit(1);
  return row !== undefined;
}
