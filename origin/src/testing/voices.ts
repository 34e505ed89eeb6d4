import { randomUUID } from 'node:crypto';
import type { Executor } from '../db/client.js';
import { voices } from '../db/schema.js';
import { insertEmbedding } from '../voice-records/store.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';

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

/**
 * A voice enrolled from real recordings as the enroll route would store it (the engine's enrollment
 * embedding and speech duration), without going through consent and HTTP.
 */
export async function insertEnrolledVoice(
  db: Executor,
  engine: VoiceprintEngine,
  ownerId: string,
  recordings: Uint8Array[],
  fields: Partial<Pick<typeof voices.$inferInsert, 'consentStatus'>> = {},
): Promise<string> {
  const enrollment = await engine.embedMany(recordings);
  const id = randomUUID();
  await db.insert(voices).values({
    id,
    ownerId,
    name: `Enrolled ${id.slice(0, 8)}`,
    status: 'ready',
    consentStatus: fields.consentStatus ?? 'unknown',
    model: enrollment.model,
    speechSeconds: enrollment.speechSeconds,
    quality: {},
  });
  await insertEmbedding(db, { voiceId: id, ownerId, model: enrollment.model, embedding: enrollment.embedding });
  return id;
}

/** A unit vector at exactly `cosine` from `probe`: the probe's direction plus an orthogonal part. */
function vectorAtCosine(probe: Float32Array, cosine: number): Float32Array {
  const norm = Math.hypot(...probe);
  const unit = Array.from(probe, (x) => x / norm);
  const along = unit[0]!;
  const orthogonal = unit.map((_, i) => (i === 0 ? 1 : 0) - along * unit[i]!);
  const orthogonalNorm = Math.hypot(...orthogonal);
  return Float32Array.from(unit, (x, i) => cosine * x + Math.sqrt(1 - cosine ** 2) * (orthogonal[i]! / orthogonalNorm));
}

/**
 * An enrolled voice whose voiceprint sits at exactly `cosine` from `probe` under `model`: lets a test
 * land an enrollment below, inside or above the identity-conflict review band.
 */
export async function insertVoiceAtCosine(db: Executor, ownerId: string, model: string, probe: Float32Array, cosine: number) {
  const id = randomUUID();
  await db.insert(voices).values({ id, ownerId, name: 'Protected voice', status: 'ready', model, speechSeconds: 30, quality: {} });
  await insertEmbedding(db, { voiceId: id, ownerId, model, embedding: vectorAtCosine(probe, cosine) });
  return id;
}
