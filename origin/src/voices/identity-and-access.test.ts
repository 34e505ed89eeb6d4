import { randomUUID } from 'node:crypto';
import { auditRecordSchema, BIOMETRIC_CONSENT_STATEMENT, enrolledVoiceSchema, pathOf } from '@vip/shared-schema';
import { deleteVoiceRoute, enrollVoiceRoute } from '@vip/shared-schema/routes/origin/voices';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditPending, biometricConsents, INDEXED_EMBEDDING_MODELS, voices } from '../db/schema.js';
import { bearer, loggedIn } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import { engine, enroll, eventsOf, grantBiometricConsent, inject, origin, storedVoice, unitAxis } from '../testing/voice-routes.js';
import { audioForm, hasCalibratedModel, silentWav, speakerRecordings } from '../testing/voiceprint.js';
import { nearestVoice } from '../voice-records/store.js';

describe('POST /api/v1/voices/enroll', () => {
  it('refuses the same speaker enrolled by a second owner with 409, naming no one, and audits the refusal', async (context) => {
    // Needs real speaker verdicts: skipped while the model is a stand-in or its threshold is not calibrated.
    if (!hasCalibratedModel(engine)) context.skip();
    const first = await loggedIn(origin);
    const second = await loggedIn(origin);
    const enrolled = await enroll(
      first,
      { audio: speakerRecordings('so762:SPEAKER9622', 0, 3) },
      { name: 'Original', consent_id: await grantBiometricConsent(first) },
    );
    expect(enrolled.statusCode, enrolled.body).toBe(201);
    const original = enrolledVoiceSchema.parse(enrolled.json());

    const copy = await enroll(
      second,
      { audio: speakerRecordings('so762:SPEAKER9622', 3, 3) },
      { name: 'Copy', consent_id: await grantBiometricConsent(second) },
    );
    const problem = expectProblem(copy, 409, 'identity_conflict');
    expect(copy.body).not.toContain(original.voice_id);
    expect(copy.body).not.toContain(first.userId);
    expect(copy.body).not.toContain('Original');
    expect(problem.detail).not.toMatch(/\d\.\d/); // no similarity score either

    const events = await eventsOf(second.userId);
    expect(events.map((event) => [event.eventType, event.voiceId])).toEqual([['enrollment.failed', null]]);
    expect(events[0]!.payload).toMatchObject({ reason: 'identity_conflict', name: 'Copy' });
    expect(JSON.stringify(events[0]!.payload)).not.toContain(original.voice_id);

    const audit = await origin.database.db.select().from(auditPending);
    const refusals = audit.map((row) => auditRecordSchema.parse(row.record)).filter((record) => record.kind === 'enrollment.refused');
    expect(refusals).toEqual([
      expect.objectContaining({
        voice_id: original.voice_id,
        caller_type: 'system',
        caller_id: null,
        action: 'refused',
        reason: 'identity_conflict',
      }),
    ]);
    // Recorded as the service's: the refused caller, who reads the entries they caused, never sees the voice's id.
    expect(JSON.stringify(refusals)).not.toContain(second.userId);
    const secondVoices = await origin.database.db.select().from(voices).where(eq(voices.ownerId, second.userId));
    expect(secondVoices).toEqual([]);
  });

  it('lets exactly one of two owners enrolling the same speaker at the same moment win', async (context) => {
    if (!hasCalibratedModel(engine)) context.skip();
    const owners = [await loggedIn(origin), await loggedIn(origin)];
    const consentIds = [await grantBiometricConsent(owners[0]!), await grantBiometricConsent(owners[1]!)];
    // Both uploads pass the early conflict check together; only the locked check at storage time can refuse one.
    const responses = await Promise.all(
      owners.map((owner, i) =>
        enroll(owner, { audio: speakerRecordings('so762:SPEAKER9622', 3 * i, 3) }, { name: `Racer ${i}`, consent_id: consentIds[i]! }),
      ),
    );
    expect(responses.map((response) => response.statusCode).sort()).toEqual([201, 409]);
    expectProblem(responses.find((response) => response.statusCode === 409)!, 409, 'identity_conflict');
    expect(await origin.database.db.select().from(voices)).toHaveLength(1);
  });

  it("finds another owner's voice behind more than a search width of the caller's own nearer voices", async (context) => {
    const indexed = INDEXED_EMBEDDING_MODELS.find((model) => model.name === engine.model.name);
    if (!indexed) context.skip();
    const crowd = await loggedIn(origin);
    const other = await loggedIn(origin);
    // HNSW hands back ef_search (40) candidates; filtering out the caller's own voices afterwards
    // would leave nothing here, so the search must keep scanning (pgvector's iterative scan).
    const tilted = (axis: number, amount: number) => unitAxis(0).map((value, i) => value + (i === axis ? amount : 0));
    for (let i = 0; i < 60; i++) await storedVoice(crowd, `Own ${i}`, new Date(), tilted(1, i * 1e-3));
    const theirs = await storedVoice(other, 'Theirs', new Date(), tilted(2, 0.5));
    const probe = { model: engine.model.name, embedding: Float32Array.from(unitAxis(0)) };
    const nearest = await origin.database.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      return nearestVoice(tx, probe, crowd.userId);
    });
    expect(nearest?.voiceId).toBe(theirs);
    expect(nearest?.similarity).toBeCloseTo(1 / Math.sqrt(1.25), 5);
  });

  it('refuses a missing, foreign or spent consent with 403 consent_required before processing audio', async () => {
    const owner = await loggedIn(origin);
    const stranger = await loggedIn(origin);
    const strangersConsent = await grantBiometricConsent(stranger);
    const spent = await grantBiometricConsent(owner);
    const voiceId = await storedVoice(owner);
    await origin.database.db.update(biometricConsents).set({ voiceId }).where(eq(biometricConsents.id, spent));
    for (const consentId of [randomUUID(), strangersConsent, spent]) {
      // Unreadable audio: the consent is refused before the engine would have said so.
      expectProblem(
        await enroll(owner, { audio: new Uint8Array([1, 2, 3]) }, { name: 'Mine', consent_id: consentId }),
        403,
        'consent_required',
      );
    }
    expect(await eventsOf(owner.userId)).toEqual([]);
  });

  it('tells an owner who enrolls without any consent to give biometric consent first, and how', async () => {
    const owner = await loggedIn(origin);
    const problem = expectProblem(await enroll(owner, { audio: new Uint8Array([1, 2, 3]) }, { name: 'Mine' }), 403, 'consent_required');
    expect(problem.detail).toBe(
      'An enrollment needs a biometric consent_id. Give biometric consent first: POST /api/v1/consents with ' +
        `{"type":"biometric","statement_version":"${BIOMETRIC_CONSENT_STATEMENT.version}","accepted":true}, ` +
        'then send the consent_id it answers as a form field of this enrollment. Each consent serves one enrollment.',
    );
    expect(await eventsOf(owner.userId)).toEqual([]);
  });

  it('needs a Bearer token', async () => {
    const response = await inject({
      method: 'POST',
      url: pathOf(enrollVoiceRoute),
      payload: audioForm({ audio: silentWav(1) }, { name: 'x' }),
    });
    expectProblem(response, 401, 'authentication_required');
  });
});

describe('DELETE /api/v1/voices/{voice_id}', () => {
  it("answers another owner's voice exactly like a missing one, and leaves it alone", async () => {
    const owner = await loggedIn(origin);
    const intruder = await loggedIn(origin);
    const voiceId = await storedVoice(owner);
    const foreign = await inject({
      method: 'DELETE',
      url: pathOf(deleteVoiceRoute, { voice_id: voiceId }),
      headers: bearer(intruder.accessToken),
    });
    const missing = await inject({
      method: 'DELETE',
      url: pathOf(deleteVoiceRoute, { voice_id: randomUUID() }),
      headers: bearer(intruder.accessToken),
    });
    expectProblem(foreign, 404, 'not_found');
    expect(foreign.json().detail).toBe(missing.json().detail);
    expect(await origin.database.db.select().from(voices).where(eq(voices.id, voiceId))).toHaveLength(1);
    expectProblem(
      await inject({ method: 'DELETE', url: pathOf(deleteVoiceRoute, { voice_id: 'not-a-uuid' }), headers: bearer(owner.accessToken) }),
      422,
      'validation_failed',
    );
  });
});
