import { and, eq, isNull, lt } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { type ChallengeRow, consentChallenges, spokenConsentRecordings } from '../db/schema.js';

export async function insertChallenge(db: Executor, challenge: typeof consentChallenges.$inferInsert): Promise<ChallengeRow> {
  const [row] = await db.insert(consentChallenges).values(challenge).returning();
  return row!;
}

export async function findChallenge(db: Executor, challengeId: string): Promise<ChallengeRow | null> {
  const [row] = await db.select().from(consentChallenges).where(eq(consentChallenges.id, challengeId));
  return row ?? null;
}

/** Deletes every challenge (spent or not) that expired before `cutoff`; answers how many. */
export async function deleteChallengesExpiredBefore(db: Executor, cutoff: Date): Promise<number> {
  const rows = await db.delete(consentChallenges).where(lt(consentChallenges.expiresAt, cutoff)).returning({ id: consentChallenges.id });
  return rows.length;
}

/** Spends the challenge; false when another enrollment spent it first. */
export async function spendChallenge(db: Executor, challengeId: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(consentChallenges)
    .set({ usedAt: now })
    .where(and(eq(consentChallenges.id, challengeId), isNull(consentChallenges.usedAt)))
    .returning({ id: consentChallenges.id });
  return rows.length === 1;
}

/** The voice's consent recording, replacing the one of an earlier enrollment. */
export async function keepRecording(db: Executor, recording: typeof spokenConsentRecordings.$inferInsert): Promise<void> {
  const { voiceId, ...rest } = recording;
  await db.insert(spokenConsentRecordings).values(recording).onConflictDoUpdate({ target: spokenConsentRecordings.voiceId, set: rest });
}

/** The consent recording of a voice (the caller has checked whose voice it is). */
export async function findRecording(db: Executor, voiceId: string): Promise<Buffer | null> {
  const [row] = await db
    .select({ audio: spokenConsentRecordings.audio })
    .from(spokenConsentRecordings)
    .where(eq(spokenConsentRecordings.voiceId, voiceId));
  return row?.audio ?? null;
}
