import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { comparisonResultSchema, pathOf } from '@vip/shared-schema';
import { compareVoicesRoute } from '@vip/shared-schema/routes/origin/detection';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { domainEvents, voiceEmbeddings, voices } from '../db/schema.js';
import { speechDir } from '../testing/fixtures.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { platformKey } from '../testing/platforms.js';
import { expectProblem } from '../testing/problem.js';
import { audioForm, EMBEDDING_LIKE, hasCalibratedModel, silentWav, speakerRecordings, startTestEngine } from '../testing/voiceprint.js';
import { insertEmbedding } from '../voice-records/store.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';
import { webhookSettings } from '../webhooks/service.js';

let engine: VoiceprintEngine;
let origin: TestOrigin;
beforeAll(async () => {
  engine = await startTestEngine({ threads: 2 });
  origin = await startTestOrigin({ voiceprint: engine });
});
afterEach(() => {
  for (const line of origin.logs) expect(line).not.toMatch(EMBEDDING_LIKE);
});
afterAll(async () => {
  await origin?.close();
  await engine?.close();
});

type Owner = Awaited<ReturnType<typeof loggedIn>>;

const compare = (owner: Owner, files: Record<string, Uint8Array>, fields: Record<string, string> = {}, app = origin.app) =>
  app.inject({ method: 'POST', url: pathOf(compareVoicesRoute), headers: bearer(owner.accessToken), payload: audioForm(files, fields) });

function expectComparison(response: LightMyRequestResponse) {
  expect(response.statusCode, response.body).toBe(200);
  expect(response.body).not.toMatch(EMBEDDING_LIKE);
  const result = comparisonResultSchema.parse(response.json());
  expect(result.model).toBe(engine.model.name);
  expect(result.threshold).toBe(engine.points(engine.model.name)[result.condition].verify);
  // A condition calibrated on normalized scores answers and decides on one; the others on the cosine.
  const normalizes = engine.model.calibration?.[result.condition].score === 'as_norm';
  expect(result.normalized_score === null).toBe(!normalizes);
  expect(result.is_same_speaker).toBe((result.normalized_score ?? result.similarity) >= result.threshold);
  // Calibrated models answer both scores, uncalibrated ones neither; the probability follows the LLR.
  expect(result.llr === null).toBe(result.probability === null);
  if (result.llr !== null) expect(result.probability).toBeCloseTo(1 / (1 + Math.exp(-result.llr)), 12);
  return result;
}

/** A voice enrolled from one recording, stored directly: the compare route only reads it. */
async function enrolledVoice(owner: Owner, recording: Uint8Array) {
  const voiceprint = await engine.embedFile(recording);
  const id = randomUUID();
  const db = origin.database.db;
  await db
    .insert(voices)
    .values({ id, ownerId: owner.userId, name: 'Enrolled', status: 'ready', model: voiceprint.model, speechSeconds: 5, quality: {} });
  await insertEmbedding(db, { voiceId: id, ownerId: owner.userId, model: voiceprint.model, embedding: voiceprint.embedding });
  return { id, hash: engine.embeddingHash(voiceprint.embedding, voiceprint.model) };
}

// Speaker verdicts are asserted only with a trained model and a calibrated threshold; with the
// stand-in (or the bundled model before calibration) these tests check the shape of the answer.
describe('POST /api/v1/detection/compare', () => {
  it('compares two recordings of the same speaker', async () => {
    const owner = await loggedIn(origin);
    const [first, second] = speakerRecordings('so762:SPEAKER9622', 0, 2);
    const result = expectComparison(await compare(owner, { audio1: first!, audio2: second! }));
    expect(result.embedding1_hash).not.toBe(result.embedding2_hash);
    expect(result.condition).toBe('sample_vs_sample');
    if (hasCalibratedModel(engine)) expect(result.is_same_speaker).toBe(true);
    if (engine.model.calibration) expect(result.llr).toBeGreaterThan(0);
  });

  it('compares recordings of two different speakers', async () => {
    const owner = await loggedIn(origin);
    const [first] = speakerRecordings('so762:SPEAKER9622', 0, 1);
    const [other] = speakerRecordings('so762:SPEAKER9623', 0, 1);
    const result = expectComparison(await compare(owner, { audio1: first!, audio2: other! }));
    if (hasCalibratedModel(engine)) expect(result.is_same_speaker).toBe(false);
    if (engine.model.calibration) expect(result.llr).toBeLessThan(0);
  });

  // Pairs of the committed fixtures where the raw cosine at its own dev point (the manifest's
  // `threshold`) decides wrongly and the normalized score rightly: these fail without normalization.
  const fixture = (file: string) => new Uint8Array(readFileSync(path.join(speechDir, 'so762', file)));
  const normalizesPairs = () => engine.model.calibration?.sample_vs_sample.score === 'as_norm';

  it('tells apart two speakers whose cosine alone would pass as one (score normalization)', async (context) => {
    if (!hasCalibratedModel(engine) || !normalizesPairs()) context.skip();
    const owner = await loggedIn(origin);
    const audio1 = fixture('SPEAKER9608/096080021.opus');
    const audio2 = fixture('SPEAKER9633/096330024.opus');
    const result = expectComparison(await compare(owner, { audio1, audio2 }));
    expect(result.similarity).toBeGreaterThan(engine.model.threshold);
    expect(result.normalized_score).toBeLessThan(result.threshold);
    expect(result.is_same_speaker).toBe(false);
  });

  it('recognizes one speaker whose cosine alone would fall short (score normalization)', async (context) => {
    if (!hasCalibratedModel(engine) || !normalizesPairs()) context.skip();
    const owner = await loggedIn(origin);
    const audio1 = fixture('SPEAKER0003/000030012.opus');
    const audio2 = fixture('SPEAKER0003/000030049.opus');
    const result = expectComparison(await compare(owner, { audio1, audio2 }));
    expect(result.similarity).toBeLessThan(engine.model.threshold);
    expect(result.is_same_speaker).toBe(true);
  });

  it('gives the same hash for the same recording, and similarity 1', async () => {
    const owner = await loggedIn(origin);
    const [recording] = speakerRecordings('so762:SPEAKER9601', 0, 1);
    const result = expectComparison(await compare(owner, { audio1: recording!, audio2: recording! }));
    expect(result.embedding1_hash).toBe(result.embedding2_hash);
    expect(result.similarity).toBeCloseTo(1, 5);
  });

  it("verifies a recording against one of the caller's enrolled voices (voice_id)", async () => {
    const owner = await loggedIn(origin);
    const [enrollment, probe] = speakerRecordings('so762:SPEAKER9622', 2, 2);
    const voice = await enrolledVoice(owner, enrollment!);
    const result = expectComparison(await compare(owner, { audio1: probe! }, { voice_id: voice.id }));
    // The stored voiceprint reads back from pgvector bit for bit.
    expect(result.embedding2_hash).toBe(voice.hash);
    // Against an enrolled voice: the sample-vs-enrolled point, not the sample-vs-sample one.
    expect(result.condition).toBe('sample_vs_enrolled');
    expect(result.threshold).toBe(engine.points(engine.model.name).sample_vs_enrolled.verify);
    if (hasCalibratedModel(engine)) expect(result.is_same_speaker).toBe(true);
    if (engine.model.calibration) expect(result.probability).toBeGreaterThan(0.5);
  });

  it("answers another owner's voice_id exactly like a missing one", async () => {
    const owner = await loggedIn(origin);
    const stranger = await loggedIn(origin);
    const [recording] = speakerRecordings('so762:SPEAKER9633', 0, 1);
    const voice = await enrolledVoice(owner, recording!);
    const foreign = await compare(stranger, { audio1: recording! }, { voice_id: voice.id });
    const missing = await compare(stranger, { audio1: recording! }, { voice_id: randomUUID() });
    expectProblem(foreign, 404, 'not_found');
    expect(foreign.json().detail).toBe(missing.json().detail);
  });

  it('refuses to compare with a voiceprint of another model (422 model_mismatch)', async () => {
    const owner = await loggedIn(origin);
    const [recording] = speakerRecordings('so762:SPEAKER9633', 1, 1);
    const voice = await enrolledVoice(owner, recording!);
    await origin.database.db.update(voiceEmbeddings).set({ model: 'an-older-model' }).where(eq(voiceEmbeddings.voiceId, voice.id));
    expectProblem(await compare(owner, { audio1: recording! }, { voice_id: voice.id }), 422, 'model_mismatch');
  });

  it('refuses malformed forms and unusable audio with 422', async () => {
    const owner = await loggedIn(origin);
    const audio = silentWav(1);
    const fieldOf = async (response: Promise<LightMyRequestResponse>) =>
      expectProblem(await response, 422, 'validation_failed').errors?.map((error) => error.field);
    expect(await fieldOf(compare(owner, { audio2: audio }))).toEqual(['body.audio1']);
    expect(await fieldOf(compare(owner, { audio1: audio }))).toEqual(['body.audio2']);
    expect(await fieldOf(compare(owner, { audio1: audio, audio2: audio }, { voice_id: randomUUID() }))).toEqual(['body.voice_id']);
    expect(await fieldOf(compare(owner, { audio1: audio }, { voice_id: 'nope' }))).toEqual(['body.voice_id']);
    expect(await fieldOf(compare(owner, { audio1: audio, audio3: audio }))).toEqual(['body.audio3']);
    const text = new FormData();
    text.append('audio1', 'hello');
    text.append('voice_id', randomUUID());
    const textResponse = origin.app.inject({
      method: 'POST',
      url: pathOf(compareVoicesRoute),
      headers: bearer(owner.accessToken),
      payload: text,
    });
    expect(await fieldOf(textResponse)).toEqual(['body.audio1']);

    expectProblem(await compare(owner, { audio1: new Uint8Array(100).fill(3), audio2: audio }), 422, 'unsupported_format');
    expectProblem(await compare(owner, { audio1: silentWav(2), audio2: silentWav(2) }), 422, 'no_speech');
  });

  it('needs a Bearer token', async () => {
    const response = await origin.app.inject({
      method: 'POST',
      url: pathOf(compareVoicesRoute),
      payload: audioForm({ audio1: silentWav(1) }),
    });
    expectProblem(response, 401, 'authentication_required');
  });

  it('answers 503 with Retry-After when the engine queue is full', async () => {
    // One thread and no waiting room: the second file of the pair finds the engine busy.
    const busyEngine = await startTestEngine({ threads: 1, maxQueue: 0 });
    const busy = await startTestOrigin({ voiceprint: busyEngine });
    try {
      const owner = await loggedIn(busy);
      const [first, second] = speakerRecordings('so762:SPEAKER9601', 0, 2);
      const response = await compare(owner, { audio1: first!, audio2: second! }, {}, busy.app);
      expectProblem(response, 503, 'unavailable');
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await busy.close();
      await busyEngine.close();
    }
  });
});

describe('POST /api/v1/detection/compare by a platform (X-API-Key)', () => {
  const compareAsPlatform = (on: TestOrigin, apiKey: string, files: Record<string, Uint8Array>, fields: Record<string, string> = {}) =>
    on.app.inject({
      method: 'POST',
      url: pathOf(compareVoicesRoute),
      headers: { 'x-api-key': apiKey },
      payload: audioForm(files, fields),
    });
  const detectedEvents = (on: TestOrigin) => on.database.db.select().from(domainEvents).where(eq(domainEvents.eventType, 'voice.detected'));

  it('compares for a platform, which may not name an enrolled voice; a wrong key is 401', async () => {
    const { apiKey } = await platformKey(origin);
    const [first, second] = speakerRecordings('so762:SPEAKER9601', 0, 2);
    expectComparison(await compareAsPlatform(origin, apiKey, { audio1: first!, audio2: second! }));
    const named = await compareAsPlatform(origin, apiKey, { audio1: first! }, { voice_id: randomUUID() });
    expect(expectProblem(named, 422, 'validation_failed').errors?.map((error) => error.field)).toEqual(['body.voice_id']);
    expectProblem(await compareAsPlatform(origin, 'vip_not-a-key', { audio1: first!, audio2: second! }), 401, 'invalid_credentials');
    // Variant A: nothing is reported to owners.
    expect(await detectedEvents(origin)).toEqual([]);
  });

  it('in Variant B, tells the owner of a matching enrolled voice which platform holds a recording of it', async (context) => {
    if (!hasCalibratedModel(engine)) context.skip();
    const variantB = await startTestOrigin({ voiceprint: engine, webhooks: webhookSettings({ allowLoopback: false, gateVariant: 'B' }) });
    try {
      const owner = await loggedIn(variantB);
      const [enrollment, probe] = speakerRecordings('so762:SPEAKER9622', 0, 2);
      const voiceprint = await engine.embedFile(enrollment!);
      const voiceId = randomUUID();
      await variantB.database.db.insert(voices).values({
        id: voiceId,
        ownerId: owner.userId,
        name: 'Mine',
        status: 'ready',
        model: voiceprint.model,
        speechSeconds: 5,
        quality: {},
      });
      await insertEmbedding(variantB.database.db, {
        voiceId,
        ownerId: owner.userId,
        model: voiceprint.model,
        embedding: voiceprint.embedding,
      });
      const platform = await platformKey(variantB);

      const [stranger] = speakerRecordings('so762:SPEAKER9623', 0, 1);
      const [otherStranger] = speakerRecordings('so762:SPEAKER9633', 0, 1);
      expectComparison(await compareAsPlatform(variantB, platform.apiKey, { audio1: stranger!, audio2: otherStranger! }));
      expect(await detectedEvents(variantB)).toEqual([]);

      // Both uploads are the owner's speaker: one event for the voice, not one per recording.
      expectComparison(await compareAsPlatform(variantB, platform.apiKey, { audio1: probe!, audio2: enrollment! }));
      const events = await detectedEvents(variantB);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ voiceId, ownerId: owner.userId });
      expect(events[0]!.payload).toMatchObject({
        event: 'voice.detected',
        voice_id: voiceId,
        owner_id: owner.userId,
        platform: platform.name,
        audio_url: null,
        action_required: true,
      });
      const { confidence } = events[0]!.payload as { confidence: number };
      expect(confidence).toBeGreaterThan(0);
      expect(confidence).toBeLessThanOrEqual(1);
    } finally {
      await variantB.close();
    }
  });
});
