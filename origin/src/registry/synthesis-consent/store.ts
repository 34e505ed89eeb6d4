import type { ConsentStatus } from '@vip/shared-schema';
import { eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { voices } from '../../db/schema.js';

export async function setConsentStatus(db: Executor, voiceId: string, status: ConsentStatus, now: Date): Promise<void> {
  await db.update(voices).set({ consentStatus: status, updatedAt: now }).where(eq(voices.id, voiceId));
}
