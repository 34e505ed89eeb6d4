import { randomUUID } from 'node:crypto';
import type { Executor } from '../db/client.js';
import { voices } from '../db/schema.js';

/** A voice row as enrollment would leave it, without the enrollment pipeline (no embeddings). */
export async function insertTestVoice(
  db: Executor,
  ownerId: string,
  fields: Partial<Pick<typeof voices.$inferInsert, 'name' | 'consentStatus'>> = {},
): Promise<string> {
  const id = randomUUID();
  await db.insert(voices).values({
    id,
    ownerId,
    name: fields.name ?? `Test voice ${id.slice(0, 8)}`,
    status: 'ready',
    consentStatus: fields.consentStatus ?? 'unknown',
    model: 'test-model',
    speechSeconds: 12.5,
    quality: {},
  });
  return id;
}
