import { randomUUID } from 'node:crypto';
import {
  auditRecordSchema,
  enrolledVoiceSchema,
  pathOf,
  voiceListSchema,
  voiceReviewListSchema,
  voiceReviewOutcomeSchema,
} from '@vip/shared-schema';
import { createPlatformRoute } from '@vip/shared-schema/routes/origin/platforms';
import { createLicenseRoute } from '@vip/shared-schema/routes/origin/registry/licenses';
import { setSynthesisConsentRoute } from '@vip/shared-schema/routes/origin/registry/synthesis-consent';
import { decideVoiceReviewRoute, enrollVoiceRoute, listVoiceReviewsRoute, listVoicesRoute } from '@vip/shared-schema/routes/origin/voices';
import { asc, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditPending, biometricConsents, domainEvents, edgeOutbox, voiceEmbeddings, voiceReviews, voices } from '../db/schema.js';
import { bearer, loggedIn } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import {
  admin,
  engine,
  grantBiometricConsent,
  inject,
  origin,
  REVIEW,
  recordings,
  STRICT,
  voiceAtCosine,
} from '../testing/review-band-routes.js';
import { audioForm } from '../testing/voiceprint.js';

/*
 * The identity-conflict review band through the public API. The engine's conflict points are fixed
 * at REVIEW and STRICT; the other owner's voice is stored with a voiceprint at a chosen cosine from
 * what the enrollment's recordings embed to, so each test lands exactly where it means to
 * (testing/review-band-routes.ts).
 */

type Owner = Awaited<ReturnType<typeof loggedIn>>;

async function enroll(owner: Owner) {
  const consentId = await grantBiometricConsent(owner);
  return inject({
    method: 'POST',
    url: pathOf(enrollVoiceRoute),
    headers: bearer(owner.accessToken),
    payload: audioForm({ audio: recordings() }, { name: 'New voice', consent_id: consentId }),
  });
}

/** An owner's voice resembling another owner's inside the band, held: its id, the matched one and both owners. */
async function heldVoice(options: { enrolling?: Owner; cosine?: number } = {}) {
  const protectedOwner = await loggedIn(origin);
  const enrolling = options.enrolling ?? (await loggedIn(origin));
  const matchedId = await voiceAtCosine(protectedOwner, options.cosine ?? 0.7);
  const response = await enroll(enrolling);
  expect(response.statusCode, response.body).toBe(201);
  const voice = enrolledVoiceSchema.parse(response.json());
  expect(voice.status).toBe('pending_review');
  return { heldId: voice.voice_id, matchedId, protectedOwner, enrolling };
}

const decide = (voiceId: string, payload: unknown, token = admin.accessToken) =>
  inject({
    method: 'POST',
    url: pathOf(decideVoiceReviewRoute, { voice_id: voiceId }),
    headers: bearer(token),
    payload: payload as object,
  });

const eventsOf = async (ownerId: string) =>
  (await origin.database.db.select().from(domainEvents).where(eq(domainEvents.ownerId, ownerId)).orderBy(asc(domainEvents.id))).map(
    (event) => ({ type: event.eventType, voiceId: event.voiceId, payload: event.payload as Record<string, unknown> }),
  );

const reviewRecordsOn = async (voiceIds: string[]) =>
  (await origin.database.db.select().from(auditPending))
    .map((row) => auditRecordSchema.parse(row.record))
    .filter((record) => record.kind === 'voice.review' && voiceIds.includes(record.voice_id!));

const setSynthesisConsent = (owner: Owner, voiceId: string, status: string) =>
  inject({
    method: 'PUT',
    url: pathOf(setSynthesisConsentRoute, { voice_id: voiceId }),
    headers: bearer(owner.accessToken),
    payload: { status },
  });

async function createLicence(owner: Owner, voiceId: string) {
  await origin.app.inject({
    method: 'POST',
    url: pathOf(createPlatformRoute),
    headers: bearer(admin.accessToken),
    payload: { name: 'Review Platform' },
  });
  return inject({
    method: 'POST',
    url: pathOf(createLicenseRoute, { voice_id: voiceId }),
    headers: bearer(owner.accessToken),
    payload: {
      platform_name: 'Review Platform',
      scopes: ['audiobook'],
      description: 'Narration of audiobook chapters for the tests',
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    },
  });
}

describe('enrollment against the identity-conflict points', () => {
  it('has the review band this file relies on', () => {
    expect(engine.points(engine.model.name).enrollment_vs_enrollment.review).toBeCloseTo(REVIEW, 9);
    expect(engine.points(engine.model.name).enrollment_vs_enrollment.strict).toBeCloseTo(STRICT, 9);
  });

  it('enrolls as ready below the review point, and refuses above the strict point as before', async () => {
    const below = await loggedIn(origin);
    await voiceAtCosine(await loggedIn(origin), REVIEW - 0.05);
    const ready = await enroll(below);
    expect(ready.statusCode, ready.body).toBe(201);
    expect(enrolledVoiceSchema.parse(ready.json()).status).toBe('ready');
    await origin.database.db.delete(voices);

    const above = await loggedIn(origin);
    await voiceAtCosine(await loggedIn(origin), STRICT + 0.05);
    expectProblem(await enroll(above), 409, 'identity_conflict');
    expect(await origin.database.db.select().from(voices).where(eq(voices.ownerId, above.userId))).toEqual([]);
  });

  it('holds an enrollment inside the band: stored as pending_review, blocked at the gate, both owners told', async () => {
    const { heldId, matchedId, protectedOwner, enrolling } = await heldVoice();

    const listed = voiceListSchema.parse(
      (await inject({ method: 'GET', url: pathOf(listVoicesRoute), headers: bearer(enrolling.accessToken) })).json(),
    );
    expect(listed.voices).toEqual([expect.objectContaining({ voice_id: heldId, status: 'pending_review', consent_status: 'unknown' })]);

    // Published to the edge without consent or licences: the gate answers blocked/no_consent.
    const [published] = await origin.database.db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, heldId));
    expect(published!.payload).toEqual({
      kind: 'voice',
      voice_id: heldId,
      record: { voice_id: heldId, owner_id: enrolling.userId, consent_status: 'unknown', licenses: [] },
    });

    const enrollingEvents = await eventsOf(enrolling.userId);
    expect(enrollingEvents.map((event) => [event.type, event.voiceId, event.payload.role ?? event.payload.status])).toEqual([
      ['enrollment.complete', heldId, 'pending_review'],
      ['voice.review_pending', heldId, 'held_voice'],
    ]);
    const protectedEvents = await eventsOf(protectedOwner.userId);
    expect(protectedEvents.map((event) => [event.type, event.voiceId, event.payload.role])).toEqual([
      ['voice.review_pending', matchedId, 'matched_voice'],
    ]);
    // Neither owner learns the other's voice or account.
    expect(JSON.stringify(enrollingEvents)).not.toContain(matchedId);
    expect(JSON.stringify(enrollingEvents)).not.toContain(protectedOwner.userId);
    expect(JSON.stringify(protectedEvents)).not.toContain(heldId);
    expect(JSON.stringify(protectedEvents)).not.toContain(enrolling.userId);

    const records = await reviewRecordsOn([heldId, matchedId]);
    expect(records).toEqual([
      expect.objectContaining({
        voice_id: heldId,
        action: 'held',
        decision: 'unresolved',
        caller_type: 'user',
        caller_id: enrolling.userId,
      }),
      expect.objectContaining({ voice_id: matchedId, action: 'held', decision: 'unresolved', caller_type: 'system', caller_id: null }),
    ]);
  });

  it('refuses synthesis consent and licences for a held voice with 409 voice_under_review; withdrawing still works', async () => {
    const { heldId, enrolling } = await heldVoice();
    const refused = expectProblem(await setSynthesisConsent(enrolling, heldId, 'active'), 409, 'voice_under_review');
    expect(refused.detail).toMatch(/held for review/);
    expectProblem(await createLicence(enrolling, heldId), 409, 'voice_under_review');
    const withdrawn = await setSynthesisConsent(enrolling, heldId, 'withdrawn');
    expect(withdrawn.statusCode, withdrawn.body).toBe(200);
    const [voice] = await origin.database.db.select().from(voices).where(eq(voices.id, heldId));
    expect(voice).toMatchObject({ status: 'pending_review', consentStatus: 'withdrawn' });
  });
});

describe('GET /api/v1/admin/voice-reviews', () => {
  it('lists held voices oldest first with the voice they resemble, one page at a time', async () => {
    const first = await heldVoice();
    origin.runtime.advance(1000);
    // The same owner again: another owner enrolling the same recordings would now be refused
    // outright, since held voices are searched like any other.
    const second = await heldVoice({ enrolling: first.enrolling, cosine: 0.75 });

    const page = await inject({ method: 'GET', url: `${pathOf(listVoiceReviewsRoute)}?limit=1`, headers: bearer(admin.accessToken) });
    expect(page.statusCode, page.body).toBe(200);
    const one = voiceReviewListSchema.parse(page.json());
    expect(one.reviews).toEqual([
      expect.objectContaining({
        voice_id: first.heldId,
        owner_id: first.enrolling.userId,
        reason: 'identity_conflict',
        matched_voice_id: first.matchedId,
        matched_owner_id: first.protectedOwner.userId,
        model: engine.model.name,
        dispute: null,
      }),
    ]);
    expect(one.reviews[0]!.similarity).toBeCloseTo(0.7, 4);
    const next = await inject({
      method: 'GET',
      url: `${pathOf(listVoiceReviewsRoute)}?limit=1&cursor=${one.next_cursor}`,
      headers: bearer(admin.accessToken),
    });
    const two = voiceReviewListSchema.parse(next.json());
    expect(two.reviews.map((review) => review.voice_id)).toEqual([second.heldId]);
    expect(two.next_cursor).toBeNull();

    // The matched voice erased meanwhile: the review stays, with no other party.
    await origin.database.db.delete(voices).where(eq(voices.id, second.matchedId));
    const after = voiceReviewListSchema.parse(
      (await inject({ method: 'GET', url: pathOf(listVoiceReviewsRoute), headers: bearer(admin.accessToken) })).json(),
    );
    expect(after.reviews[1]).toMatchObject({ voice_id: second.heldId, matched_voice_id: null, matched_owner_id: null });
  });

  it('answers 403 to an owner, 401 without a credential, 422 to a bad query', async () => {
    const owner = await loggedIn(origin);
    expectProblem(
      await inject({ method: 'GET', url: pathOf(listVoiceReviewsRoute), headers: bearer(owner.accessToken) }),
      403,
      'forbidden',
    );
    expectProblem(await inject({ method: 'GET', url: pathOf(listVoiceReviewsRoute) }), 401, 'authentication_required');
    for (const query of ['limit=0', 'limit=101', 'cursor=bm90LWEtY3Vyc29y', 'extra=1']) {
      expectProblem(
        await inject({ method: 'GET', url: `${pathOf(listVoiceReviewsRoute)}?${query}`, headers: bearer(admin.accessToken) }),
        422,
        'validation_failed',
      );
    }
  });
});

describe('POST /api/v1/admin/voice-reviews/{voice_id}', () => {
  it('clears a held voice: ready, both owners told, consent and licences open; deciding again answers 409', async () => {
    const { heldId, matchedId, protectedOwner, enrolling } = await heldVoice();
    // Only a disputed voice is transferred (voices/disputes.test.ts); this one stays held.
    const transfer = expectProblem(await decide(heldId, { decision: 'transfer' }), 409, 'conflict');
    expect(transfer.detail).toMatch(/^Only a disputed voice can be transferred/);
    const cleared = await decide(heldId, { decision: 'clear' });
    expect(cleared.statusCode, cleared.body).toBe(200);
    const clearedOutcome = voiceReviewOutcomeSchema.parse(cleared.json());
    expect(clearedOutcome).toEqual({ voice_id: heldId, status: 'ready', transferred_voice_id: null, check_id: expect.any(String) });
    expect(await origin.database.db.select().from(voiceReviews).where(eq(voiceReviews.voiceId, heldId))).toEqual([]);

    expect((await eventsOf(enrolling.userId)).at(-1)).toMatchObject({
      type: 'voice.review_cleared',
      voiceId: heldId,
      payload: { role: 'held_voice' },
    });
    expect((await eventsOf(protectedOwner.userId)).at(-1)).toMatchObject({
      type: 'voice.review_cleared',
      voiceId: matchedId,
      payload: { role: 'matched_voice' },
    });
    const records = await reviewRecordsOn([heldId, matchedId]);
    expect(records.filter((record) => record.action === 'cleared')).toEqual([
      expect.objectContaining({ voice_id: heldId, decision: 'allow', caller_id: admin.userId }),
      expect.objectContaining({ voice_id: matchedId, decision: 'allow', caller_id: admin.userId }),
    ]);
    // The answer's check_id is the held voice's entry, whose receipt the administrator can fetch.
    expect(records.find((record) => record.voice_id === heldId && record.action === 'cleared')?.check_id).toBe(clearedOutcome.check_id);

    expect((await setSynthesisConsent(enrolling, heldId, 'active')).statusCode).toBe(200);
    expect((await createLicence(enrolling, heldId)).statusCode).toBe(201);

    expectProblem(await decide(heldId, { decision: 'clear' }), 409, 'conflict');
    expectProblem(await decide(heldId, { decision: 'reject' }), 409, 'conflict');
  });

  it('rejects a held voice by erasing it as DELETE does, and tells both owners', async () => {
    const { heldId, matchedId, protectedOwner, enrolling } = await heldVoice();
    const rejected = await decide(heldId, { decision: 'reject' });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(voiceReviewOutcomeSchema.parse(rejected.json())).toEqual({
      voice_id: heldId,
      status: 'rejected',
      transferred_voice_id: null,
      check_id: expect.any(String),
    });

    const db = origin.database.db;
    expect(await db.select().from(voices).where(eq(voices.id, heldId))).toEqual([]);
    expect(await db.select().from(voiceEmbeddings).where(eq(voiceEmbeddings.voiceId, heldId))).toEqual([]);
    expect(await db.select().from(biometricConsents).where(eq(biometricConsents.ownerId, enrolling.userId))).toEqual([]);
    const updates = await db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, heldId)).orderBy(asc(edgeOutbox.id));
    expect(updates.at(-1)!.payload).toEqual({ kind: 'voice', voice_id: heldId, record: null });

    const enrollingEvents = await eventsOf(enrolling.userId);
    expect(enrollingEvents.slice(-2).map((event) => [event.type, event.voiceId])).toEqual([
      ['voice.review_rejected', heldId],
      ['voice.deleted', heldId],
    ]);
    expect(enrollingEvents.at(-1)!.payload.erased).toEqual({ embeddings: 1, licenses: 0, consents: 1, edge_index: true });
    expect((await eventsOf(protectedOwner.userId)).at(-1)).toMatchObject({ type: 'voice.review_rejected', voiceId: matchedId });

    const audit = (await db.select().from(auditPending)).map((row) => auditRecordSchema.parse(row.record));
    expect(audit.filter((record) => record.voice_id === heldId && record.kind === 'voice.deleted')).toEqual([
      expect.objectContaining({ action: 'deleted', caller_id: admin.userId }),
    ]);
    expect(audit.filter((record) => record.action === 'rejected').map((record) => record.voice_id)).toEqual([heldId, matchedId]);
    // The protected voice is untouched.
    expect(
      await db
        .select()
        .from(voices)
        .where(inArray(voices.id, [matchedId])),
    ).toHaveLength(1);

    expectProblem(await decide(heldId, { decision: 'reject' }), 404, 'not_found');
  });

  it('refuses bad bodies and parameters with 422, an unknown voice with 404 and a ready voice with 409', async () => {
    const { heldId } = await heldVoice();
    const cases: [unknown, string][] = [
      [{}, 'body.decision'],
      [{ decision: 'approve' }, 'body.decision'],
      [{ decision: 1 }, 'body.decision'],
      [{ decision: 'clear', note: 'extra' }, 'body.note'],
    ];
    for (const [payload, field] of cases) {
      const problem = expectProblem(await decide(heldId, payload), 422, 'validation_failed');
      expect(problem.errors?.map((error) => error.field)).toContain(field);
    }
    const malformed = await inject({
      method: 'POST',
      url: pathOf(decideVoiceReviewRoute, { voice_id: heldId }),
      headers: { ...bearer(admin.accessToken), 'content-type': 'application/json' },
      payload: '{"decision":',
    });
    expectProblem(malformed, 422, 'malformed_json');
    const badId = expectProblem(await decide('not-a-uuid', { decision: 'clear' }), 422, 'validation_failed');
    expect(badId.errors?.map((error) => error.field)).toContain('params.voice_id');
    expectProblem(await decide(randomUUID(), { decision: 'clear' }), 404, 'not_found');

    const readyOwner = await loggedIn(origin);
    const readyId = await voiceAtCosine(readyOwner, 0);
    expectProblem(await decide(readyId, { decision: 'reject' }), 409, 'conflict');
    expect(await origin.database.db.select().from(voices).where(eq(voices.id, readyId))).toHaveLength(1);

    // Nothing above decided anything.
    const [held] = await origin.database.db.select().from(voices).where(eq(voices.id, heldId));
    expect(held!.status).toBe('pending_review');
  });

  it('answers 403 to either owner and 401 without a credential, deciding nothing', async () => {
    const { heldId, protectedOwner, enrolling } = await heldVoice();
    expectProblem(await decide(heldId, { decision: 'clear' }, enrolling.accessToken), 403, 'forbidden');
    expectProblem(await decide(heldId, { decision: 'reject' }, protectedOwner.accessToken), 403, 'forbidden');
    expectProblem(
      await inject({ method: 'POST', url: pathOf(decideVoiceReviewRoute, { voice_id: heldId }), payload: { decision: 'clear' } }),
      401,
      'authentication_required',
    );
    expectProblem(await decide(heldId, { decision: 'clear' }, 'forged.token.value'), 401, 'invalid_token');
    const [held] = await origin.database.db.select().from(voices).where(eq(voices.id, heldId));
    expect(held!.status).toBe('pending_review');
  });
});
