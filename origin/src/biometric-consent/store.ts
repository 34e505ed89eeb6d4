import type { SpokenConsentEvidence } from '@vip/shared-schema';
import { eq } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { biometricConsents, type ConsentRow } from '../db/schema.js';

export async function insertConsent(db: Executor, consent: typeof biometricConsents.$inferInsert): Promise<ConsentRow> {
  const [row] = await db.insert(biometricConsents).values(consent).returning();
  return row!;
}

/** Locked for the rest of the transaction, so two enrollments cannot both use it. */
export async function lockConsent(db: Executor, consentId: string): Promise<ConsentRow | null> {
  const [row] = await db.select().from(biometricConsents).where(eq(biometricConsents.id, consentId)).for('update');
  return row ?? null;
}

export async function findConsent(db: Executor, consentId: string): Promise<ConsentRow | null> {
  const [row] = await db.select().from(biometricConsents).where(eq(biometricConsents.id, consentId));
  return row ?? null;
}

export async function attachConsentToVoice(db: Executor, consentId: string, voiceId: string): Promise<void> {
  await db.update(biometricConsents).set({ voiceId }).where(eq(biometricConsents.id, consentId));
}

/** What the spoken-consent checks of the voice's latest enrollment found. */
export async function recordSpokenEvidence(db: Executor, voiceId: string, evidence: SpokenConsentEvidence): Promise<void> {
  await db.update(biometricConsents).set({ spokenEvidence: evidence }).where(eq(biometricConsents.voiceId, voiceId));
}

/** Erasure: the consent records that served the voice. */
export async function deleteConsentsOfVoice(db: Executor, voiceId: string): Promise<number> {
  const rows = await db.delete(biometricConsents).where(eq(biometricConsents.voiceId, voiceId)).returning({ id: biometricConsents.id });
  return rows.length;
}
