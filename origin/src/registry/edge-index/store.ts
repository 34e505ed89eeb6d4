import { and, asc, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { type LicenseRow, licenses } from '../../db/schema.js';

/** Active licences only: revoked and expired ones never grant anything at the edge. */
export function listActiveLicenses(db: Executor, voiceId: string): Promise<LicenseRow[]> {
  return db
    .select()
    .from(licenses)
    .where(and(eq(licenses.voiceId, voiceId), eq(licenses.status, 'active')))
    .orderBy(asc(licenses.createdAt), asc(licenses.id));
}
