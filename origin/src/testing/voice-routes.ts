import { randomUUID } from 'node:crypto';
import { consentSchema, PROBLEM_CONTENT_TYPE } from '@vip/shared-schema';
import { asc, eq } from 'drizzle-orm';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { domainEvents, voiceEmbeddings, voices } from '../db/schema.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';
import { bearer, type loggedIn, startTestOrigin, type TestOrigin } from './origin.js';
import { audioForm, EMBEDDING_LIKE, startTestEngine } from './voiceprint.js';

/**
 * The voice routes' origin and voiceprint engine, one each per test file: importing this module
 * starts them (beforeAll), checks after each test that no response body or log line held an
 * embedding and deletes the voices, and closes them (afterAll). The tests are split by case, as
 * voices/voices.test.ts (what works), voices.errors.test.ts (what is refused) and
 * voices.security.test.ts (who may, and identity conflicts). Row inserters every suite uses stay in
 * testing/voices.ts, which starts nothing.
 */
export let engine: VoiceprintEngine;
export let origin: TestOrigin;
/** Response bodies of the running test, scanned for embeddings after it. */
const bodies: string[] = [];

beforeAll(async () => {
  // A registry designed for one voice with refusals allowed 5 % of the time: the strict point falls
  // to where the model's fitted impostor tail starts, so a second owner's enrollment of the same
  // speaker is refused here. At the shipped 100,000-voice points the bundled model refuses nothing
  // and holds duplicates for review instead (reviews.test.ts, and the sequential-enrollment bench).
  engine = await startTestEngine({ threads: 2, searchTargets: { designRegistrySize: 1, conflictStrictFpir: 0.05 } });
  origin = await startTestOrigin({ voiceprint: engine });
});
afterAll(async () => {
  await origin?.close();
  await engine?.close();
});
afterEach(async () => {
  for (const body of bodies.splice(0)) expect(body).not.toMatch(EMBEDDING_LIKE);
  for (const line of origin.logs) expect(line).not.toMatch(EMBEDDING_LIKE);
  // Voices of unrelated tests would otherwise meet in the 1:N search (an uncalibrated model matches anyone).
  await origin.database.db.delete(voices);
});

type Owner = Awaited<ReturnType<typeof loggedIn>>;

export async function inject(options: InjectOptions): Promise<LightMyRequestResponse> {
  const response = await origin.app.inject(options);
  bodies.push(response.body);
  return response;
}

export async function grantConsent(owner: Owner): Promise<string> {
  const response = await inject({
    method: 'POST',
    url: '/api/v1/consents',
    headers: bearer(owner.accessToken),
    payload: { type: 'biometric', statement_version: '2026-01', accepted: true },
  });
  expect(response.statusCode).toBe(201);
  return consentSchema.parse(response.json()).consent_id;
}

export const enroll = (owner: Owner, files: Record<string, Uint8Array | Uint8Array[]>, fields: Record<string, string>) =>
  inject({ method: 'POST', url: '/api/v1/voices/enroll', headers: bearer(owner.accessToken), payload: audioForm(files, fields) });

export function expectProblem(response: LightMyRequestResponse, status: number, code: string) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
  expect(response.json().code).toBe(code);
  return response.json() as { detail: string; errors?: { field: string; message: string }[] };
}

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
