import { randomUUID } from 'node:crypto';
import { pathOf } from '@vip/shared-schema';
import { enrollVoiceRoute } from '@vip/shared-schema/routes/origin/voices';
import { asc, eq } from 'drizzle-orm';
import { domainEvents, voiceEmbeddings, voices } from '../db/schema.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';
import { bearer, type loggedIn, type TestOrigin } from './origin.js';
import { voiceOriginPerTestFile } from './voice-origin.js';
import { audioForm, startTestEngine } from './voiceprint.js';

/**
 * The voice routes' origin and voiceprint engine, one each per test file: importing this module
 * starts them (testing/voice-origin.ts: it also checks after each test that no response body or log
 * line held an embedding, deletes the voices, and closes them). The tests are split by subject, as
 * voices/voices.test.ts (what works), refusals.test.ts (what is refused),
 * identity-and-access.test.ts (identity conflicts, and who may) and disputes.test.ts. Row inserters every suite uses stay in
 * testing/voices.ts, which starts nothing.
 */
export let engine: VoiceprintEngine;
export let origin: TestOrigin;

export const { inject, grantBiometricConsent } = voiceOriginPerTestFile(
  // A registry designed for one voice with refusals allowed 5 % of the time: the strict point falls
  // to where the model's fitted impostor tail starts, so a second owner's enrollment of the same
  // speaker is refused here. At the shipped 100,000-voice points the bundled model refuses nothing
  // and holds duplicates for review instead (reviews.test.ts, and the sequential-enrollment bench).
  () => startTestEngine({ threads: 2, searchTargets: { designRegistrySize: 1, conflictStrictFpir: 0.05 } }),
  (started) => {
    ({ engine, origin } = started);
  },
);

type Owner = Awaited<ReturnType<typeof loggedIn>>;

export const enroll = (owner: Owner, files: Record<string, Uint8Array | Uint8Array[]>, fields: Record<string, string>) =>
  inject({ method: 'POST', url: pathOf(enrollVoiceRoute), headers: bearer(owner.accessToken), payload: audioForm(files, fields) });

export const eventsOf = (ownerId: string) =>
  origin.database.db.select().from(domainEvents).where(eq(domainEvents.ownerId, ownerId)).orderBy(asc(domainEvents.id));

/** A voice stored directly, with a made-up voiceprint: for the routes that never touch audio. */
export const unitAxis = (axis: number): number[] => Array.from({ length: engine.model.dim }, (_, i) => (i === axis ? 1 : 0));

export async function storedVoice(owner: Owner, name = 'Stored voice', createdAt = new Date(), vector = unitAxis(0)) {
  const id = randomUUID();
  await origin.database.db.insert(voices).values({
    id,
    ownerId: owner.userId,
    name,
    status: 'ready',
    model: engine.model.name,
    speechSeconds: 12.5,
    quality: {},
    createdAt,
  });
  const embedding = `[${vector.join(',')}]`;
  await origin.database.db.insert(voiceEmbeddings).values({ voiceId: id, ownerId: owner.userId, model: engine.model.name, embedding });
  return id;
}
