import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { consentChallenges, spokenConsentRecordings, voices } from '../db/schema.js';

export type ChallengeRow = typeof consentChallenges.$inferSelect;

export async function insertChallenge(db: Executor, challenge: typeof consentChallenges.$inferInsert): Promise<ChallengeRow> {
  const [row] = await db.insert(consentChallenges).values(challenge).returning();
  return row!;
}

export async function findChallenge(db: Executor, challengeId: string): Promise<ChallengeRow | null> {
  const [row] = await db.select().from(consentChallenges).where(eq(consentChallenges.id, challengeId));
  return row ?? null;
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

/** The consent recording of a voice of `ownerId`; null for another owner's voice as for none. */
export async function findRecordingOfOwner(db: Executor, ownerId: string, voiceId: string): Promise<Buffer | null> {
  const [row] = await db
    .select({ audio: spokenConsentRecordings.audio })
    .from(spokenConsentRecordings)
    .innerJoin(voices, eq(voices.id, spokenConsentRecordings.voiceId))
    .where(and(eq(spokenConsentRecordings.voiceId, voiceId), eq(voices.ownerId, ownerId)));
  return row?.audio ?? null;
}
