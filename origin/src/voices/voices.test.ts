import { randomUUID } from 'node:crypto';
import { auditRecordSchema, enrolledVoiceSchema, pathOf, recordingMeasurementsSchema, voiceListSchema } from '@vip/shared-schema';
import { deleteVoiceRoute, listVoicesRoute, measureRecordingsRoute } from '@vip/shared-schema/routes/origin/voices';
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  auditPending,
  biometricConsents,
  domainEvents,
  edgeOutbox,
  INDEXED_EMBEDDING_MODELS,
  licenses,
  voiceEmbeddings,
  voices,
} from '../db/schema.js';
import { bearer, loggedIn } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import { engine, enroll, eventsOf, grantBiometricConsent, inject, origin, storedVoice } from '../testing/voice-routes.js';
import { audioForm, EMBEDDING_LIKE, silentWav, speakerRecordings } from '../testing/voiceprint.js';
import { nearestVoiceQuery } from '../voice-records/store.js';

describe('POST /api/v1/voices/enroll', () => {
  it('enrolls a voice from several recordings, stores only its voiceprint, publishes it and reports enrollment.complete', async () => {
    const owner = await loggedIn(origin);
    const consentId = await grantBiometricConsent(owner);
    const response = await enroll(
      owner,
      { audio: speakerRecordings('so762:SPEAKER9633', 0, 3) },
      { name: 'My narrator voice', consent_id: consentId },
    );
    expect(response.statusCode, response.body).toBe(201);
    const voice = enrolledVoiceSchema.parse(response.json());
    expect(voice).toMatchObject({ name: 'My narrator voice', status: 'ready', model: engine.model.name });
    expect(voice.speech_seconds).toBeGreaterThanOrEqual(10);
    expect(voice.quality.files).toHaveLength(3);
    expect(voice.quality.clipping_ratio).toBe(0);
    expect(voice.quality.warnings).not.toContain('clipping');
    expect(voice.quality.snr_db).toBe(Math.min(...voice.quality.files.map((file) => file.snr_db)));
    expect(response.body).not.toMatch(EMBEDDING_LIKE);

    const [embedding] = await origin.database.db.select().from(voiceEmbeddings).where(eq(voiceEmbeddings.voiceId, voice.voice_id));
    expect(embedding).toMatchObject({ ownerId: owner.userId, model: engine.model.name });
    const [consent] = await origin.database.db.select().from(biometricConsents).where(eq(biometricConsents.id, consentId));
    expect(consent!.voiceId).toBe(voice.voice_id);

    const events = await eventsOf(owner.userId);
    expect(events.map((event) => [event.eventType, event.voiceId])).toEqual([['enrollment.complete', voice.voice_id]]);
    expect(events[0]!.payload).toMatchObject({
      event: 'enrollment.complete',
      voice_id: voice.voice_id,
      name: 'My narrator voice',
      model: engine.model.name,
    });

    const [published] = await origin.database.db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, voice.voice_id));
    expect(published!.payload).toEqual({
      kind: 'voice',
      voice_id: voice.voice_id,
      record: { voice_id: voice.voice_id, owner_id: owner.userId, consent_status: 'unknown', licenses: [] },
    });

    const listed = voiceListSchema.parse(
      (await inject({ method: 'GET', url: pathOf(listVoicesRoute), headers: bearer(owner.accessToken) })).json(),
    );
    expect(listed.voices).toEqual([
      expect.objectContaining({ voice_id: voice.voice_id, consent_status: 'unknown', model: engine.model.name, status: 'ready' }),
    ]);

    // The consent has served its voice.
    const again = await enroll(owner, { audio: speakerRecordings('so762:SPEAKER9633', 3, 3) }, { name: 'Again', consent_id: consentId });
    expectProblem(again, 403, 'consent_required');
    expect(origin.logs.join('\n')).not.toMatch(EMBEDDING_LIKE);
  });

  it("lets an owner enroll the same speaker twice (the 1:N search skips the caller's own voices)", async () => {
    const owner = await loggedIn(origin);
    const files = speakerRecordings('so762:SPEAKER9601', 0, 3);
    expect((await enroll(owner, { audio: files }, { name: 'One', consent_id: await grantBiometricConsent(owner) })).statusCode).toBe(201);
    expect((await enroll(owner, { audio: files }, { name: 'Two', consent_id: await grantBiometricConsent(owner) })).statusCode).toBe(201);
  });

  it("searches other owners' voiceprints through the model's HNSW index", async (context) => {
    const indexed = INDEXED_EMBEDDING_MODELS.find((model) => model.name === engine.model.name);
    if (!indexed) context.skip(); // a stand-in model has no index of its own
    await storedVoice(await loggedIn(origin));
    const probe = { model: engine.model.name, embedding: Float32Array.from({ length: engine.model.dim }, (_, i) => (i === 1 ? 1 : 0)) };
    const plan = await origin.database.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      return tx.execute(sql`explain ${nearestVoiceQuery(tx, probe, randomUUID())}`);
    });
    expect(JSON.stringify(plan)).toContain(`Index Scan using ${indexed!.index}`);
  });
});

describe('GET /api/v1/voices', () => {
  it("lists only the caller's voices, newest first, page by page", async () => {
    const owner = await loggedIn(origin);
    const other = await loggedIn(origin);
    const base = Date.parse('2026-11-01T00:00:00Z');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await storedVoice(owner, `Voice ${i}`, new Date(base + i * 1000)));
    await storedVoice(other, 'Not yours');

    const list = (query: string) =>
      inject({ method: 'GET', url: `${pathOf(listVoicesRoute)}${query}`, headers: bearer(owner.accessToken) });
    const first = voiceListSchema.parse((await list('?limit=2')).json());
    expect(first.voices.map((voice) => voice.voice_id)).toEqual([ids[2], ids[1]]);
    expect(first.voices[0]).toEqual({
      voice_id: ids[2],
      name: 'Voice 2',
      status: 'ready',
      consent_status: 'unknown',
      created_at: new Date(base + 2000).toISOString(),
      model: engine.model.name,
      voiceprint_current: true,
      speech_seconds: 12.5,
    });
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = voiceListSchema.parse((await list(`?limit=2&cursor=${first.next_cursor}`)).json());
    expect(second).toEqual({ voices: [expect.objectContaining({ voice_id: ids[0] })], next_cursor: null });
  });
});

describe('DELETE /api/v1/voices/{voice_id}', () => {
  it('erases the voiceprint, licences and consent, publishes the deletion and gives a receipt; 404 afterwards', async () => {
    const owner = await loggedIn(origin);
    const voiceId = await storedVoice(owner);
    const consentId = await grantBiometricConsent(owner);
    await origin.database.db.update(biometricConsents).set({ voiceId }).where(eq(biometricConsents.id, consentId));
    await origin.database.db.insert(licenses).values({
      id: randomUUID(),
      voiceId,
      platformName: 'Some Platform',
      scopes: ['audiobook'],
      description: 'Narration of audiobook chapters for the tests',
      expiresAt: new Date(Date.now() + 86_400_000),
      tokenHash: randomUUID(),
    });

    const deleted = await inject({
      method: 'DELETE',
      url: pathOf(deleteVoiceRoute, { voice_id: voiceId }),
      headers: bearer(owner.accessToken),
    });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({
      voice_id: voiceId,
      deleted: true,
      erased: { embeddings: 1, licenses: 1, consents: 1, edge_index: true },
    });

    const db = origin.database.db;
    expect(await db.select().from(voices).where(eq(voices.id, voiceId))).toEqual([]);
    expect(await db.select().from(voiceEmbeddings).where(eq(voiceEmbeddings.voiceId, voiceId))).toEqual([]);
    expect(await db.select().from(licenses).where(eq(licenses.voiceId, voiceId))).toEqual([]);
    expect(await db.select().from(biometricConsents).where(eq(biometricConsents.id, consentId))).toEqual([]);
    const [published] = await db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, voiceId));
    expect(published!.payload).toEqual({ kind: 'voice', voice_id: voiceId, record: null });
    const events = await db
      .select()
      .from(domainEvents)
      .where(and(eq(domainEvents.voiceId, voiceId), eq(domainEvents.eventType, 'voice.deleted')));
    expect(events).toHaveLength(1);
    const audit = (await db.select().from(auditPending)).map((row) => auditRecordSchema.parse(row.record));
    expect(audit).toContainEqual(
      expect.objectContaining({ kind: 'voice.deleted', voice_id: voiceId, caller_id: owner.userId, action: 'deleted' }),
    );

    const again = await inject({
      method: 'DELETE',
      url: pathOf(deleteVoiceRoute, { voice_id: voiceId }),
      headers: bearer(owner.accessToken),
    });
    expectProblem(again, 404, 'not_found');
  });
});

describe('POST /api/v1/voices/measure', () => {
  const measure = (accessToken: string | null, files: Record<string, Uint8Array | Uint8Array[]>) =>
    inject({
      method: 'POST',
      url: pathOf(measureRecordingsRoute),
      headers: accessToken ? bearer(accessToken) : {},
      payload: audioForm(files),
    });

  it('measures speech as enrollment then counts it, per file and in total, and stores nothing', async () => {
    const owner = await loggedIn(origin);
    const recordings = speakerRecordings('so762:SPEAKER9633', 3, 2);
    const before = await origin.database.db.select({ count: sql<number>`count(*)::int` }).from(voiceEmbeddings);
    const response = await measure(owner.accessToken, { audio: recordings });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.body).not.toMatch(EMBEDDING_LIKE);
    const measured = recordingMeasurementsSchema.parse(response.json());
    expect(measured.files.map((file) => file.filename)).toEqual(['audio-0.audio', 'audio-1.audio']);
    expect(measured.speech_seconds).toBeCloseTo(measured.files[0]!.speech_seconds + measured.files[1]!.speech_seconds, 6);

    const consentId = await grantBiometricConsent(owner);
    const enrolled = await enroll(owner, { audio: recordings }, { name: 'Measured first', consent_id: consentId });
    expect(enrolled.statusCode, enrolled.body).toBe(201);
    expect(enrolledVoiceSchema.parse(enrolled.json()).speech_seconds).toBeCloseTo(measured.speech_seconds, 6);
    const after = await origin.database.db.select({ count: sql<number>`count(*)::int` }).from(voiceEmbeddings);
    // The one voiceprint is the enrollment's: measuring kept none.
    expect(after[0]!.count).toBe(before[0]!.count + 1);
    expect(await eventsOf(owner.userId)).toHaveLength(1);
  });

  it('answers 401 without a session and no_speech for a recording without speech', async () => {
    expectProblem(await measure(null, { audio: speakerRecordings('so762:SPEAKER9633', 0, 1) }), 401, 'authentication_required');
    const owner = await loggedIn(origin);
    expectProblem(await measure(owner.accessToken, { audio: silentWav(3) }), 422, 'no_speech');
  });
});
