import type { LicenseRequestStatus } from '@vip/shared-schema';
import { and, desc, eq } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { type LicenseRequestRow, licenseRequests } from '../db/schema.js';
import { olderThan, type TimeCursor } from '../http/cursor.js';

export async function insertRequest(db: Executor, request: typeof licenseRequests.$inferInsert): Promise<LicenseRequestRow> {
  const [row] = await db.insert(licenseRequests).values(request).returning();
  return row!;
}

/** Call after locking the voice, so two requests of one platform cannot both find none pending. */
export async function findPendingRequest(db: Executor, voiceId: string, platformName: string): Promise<LicenseRequestRow | null> {
  const [row] = await db
    .select()
    .from(licenseRequests)
    .where(
      and(eq(licenseRequests.voiceId, voiceId), eq(licenseRequests.platformName, platformName), eq(licenseRequests.status, 'pending')),
    );
  return row ?? null;
}

export async function findRequest(db: Executor, requestId: string): Promise<LicenseRequestRow | null> {
  const [row] = await db.select().from(licenseRequests).where(eq(licenseRequests.id, requestId));
  return row ?? null;
}

/** Call after locking the voice: every registry change locks the voice first. */
export async function lockRequestOfVoice(db: Executor, voiceId: string, requestId: string): Promise<LicenseRequestRow | null> {
  const [row] = await db
    .select()
    .from(licenseRequests)
    .where(and(eq(licenseRequests.id, requestId), eq(licenseRequests.voiceId, voiceId)))
    .for('update');
  return row ?? null;
}

/** Newest first; `after` is the last row of the previous page. */
export function listRequestsOfVoice(
  db: Executor,
  voiceId: string,
  options: { limit: number; after: TimeCursor | null; status: LicenseRequestStatus | undefined },
): Promise<LicenseRequestRow[]> {
  const { after, status } = options;
  return db
    .select()
    .from(licenseRequests)
    .where(
      and(
        eq(licenseRequests.voiceId, voiceId),
        status ? eq(licenseRequests.status, status) : undefined,
        olderThan(licenseRequests.createdAt, licenseRequests.id, after),
      ),
    )
    .orderBy(desc(licenseRequests.createdAt), desc(licenseRequests.id))
    .limit(options.limit);
}

export async function updateRequest(
  db: Executor,
  requestId: string,
  changes: Pick<Partial<LicenseRequestRow>, 'status' | 'licenseId' | 'declineReason' | 'closedReason'> & { answeredAt: Date },
): Promise<LicenseRequestRow> {
  const [row] = await db.update(licenseRequests).set(changes).where(eq(licenseRequests.id, requestId)).returning();
  return row!;
}

/** Closes every pending request of the voice; answers the closed rows. */
export function closePendingRequests(
  db: Executor,
  voiceId: string,
  reason: NonNullable<LicenseRequestRow['closedReason']>,
  now: Date,
): Promise<LicenseRequestRow[]> {
  return db
    .update(licenseRequests)
    .set({ status: 'closed', closedReason: reason, answeredAt: now })
    .where(and(eq(licenseRequests.voiceId, voiceId), eq(licenseRequests.status, 'pending')))
    .returning();
}
