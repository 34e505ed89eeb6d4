import { and, asc, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { type LicenseRow, licenses, type VoiceRow, voices } from '../../db/schema.js';

/**
 * Locks the voice's row for the rest of the transaction: every change that publishes a voice takes
 * this lock first, so its outbox row (the version) is written in commit order.
 */
export async function lockVoice(db: Executor, voiceId: string): Promise<VoiceRow | null> {
  const [row] = await db.select().from(voices).where(eq(voices.id, voiceId)).for('update');
  return row ?? null;
}

/** Active licences only: revoked and expired ones never grant anything at the edge. */
export function listActiveLicenses(db: Executor, voiceId: string): Promise<LicenseRow[]> {
  return db
    .select()
    .from(licenses)
    .where(and(eq(licenses.voiceId, voiceId), eq(licenses.status, 'active')))
    .orderBy(asc(licenses.createdAt), asc(licenses.id));
}

export async function findVoice(db: Executor, voiceId: string): Promise<VoiceRow | null> {
  const [row] = await db.select().from(voices).where(eq(voices.id, voiceId));
  return row ?? null;
}
