import { randomUUID } from 'node:crypto';
import { enrolledVoiceSchema, pathOf, voiceListSchema } from '@vip/shared-schema';
import { createPlatformRoute } from '@vip/shared-schema/routes/origin/platforms';
import { createLicenseRoute } from '@vip/shared-schema/routes/origin/registry/licenses';
import { setSynthesisConsentRoute } from '@vip/shared-schema/routes/origin/registry/synthesis-consent';
import { decideVoiceReviewRoute, enrollVoiceRoute, listVoicesRoute, reenrollVoiceRoute } from '@vip/shared-schema/routes/origin/voices';
import { asc, desc, eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { domainEvents, edgeOutbox, voiceEmbeddings, voices } from '../db/schema.js';
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
import { audioForm, silentWav } from '../testing/voiceprint.js';

/*
 * Re-enrollment through the public API: a voice enrolled under a model the service no longer runs
 * gets a voiceprint of the current model and keeps everything else. Another owner's voice is stored
 * at a chosen cosine from what the recordings embed to, around the review band's points, as in
 * reviews.test.ts (testing/review-band-routes.ts).
 */
const RETIRED_MODEL = 'vip-speaker-v0';

type Owner = Awaited<ReturnType<typeof loggedIn>>;

beforeAll(async () => {
  const platform = await inject({
    method: 'POST',
    url: pathOf(createPlatformRoute),
    headers: bearer(admin.accessToken),
    payload: { name: 'Upgrade Platform' },
  });
  expect(platform.statusCode, platform.body).toBe(201);
});

/** Another owner's voice under the current model, its voiceprint at `cosine` from the recordings'. */
const otherOwnersVoice = async (cosine: number) => voiceAtCosine(await loggedIn(origin), cosine);

/**
 * An owner's voice with synthesis consent and a live licence, whose voiceprint is then marked as made
 * by a model the service no longer runs (what an upgrade leaves behind).
 */
async function licensedVoiceOfRetiredModel() {
  const owner = await loggedIn(origin);
  const enrolled = await inject({
    method: 'POST',
    url: pathOf(enrollVoiceRoute),
    headers: bearer(owner.accessToken),
    payload: audioForm({ audio: recordings() }, { name: 'Narrator', consent_id: await grantBiometricConsent(owner) }),
  });
  expect(enrolled.statusCode, enrolled.body).toBe(201);
  const voiceId = enrolledVoiceSchema.parse(enrolled.json()).voice_id;
  const granted = await inject({
    method: 'PUT',
    url: pathOf(setSynthesisConsentRoute, { voice_id: voiceId }),
    headers: bearer(owner.accessToken),
    payload: { status: 'active' },
  });
  expect(granted.statusCode, granted.body).toBe(200);
  const licensed = await inject({
    method: 'POST',
    url: pathOf(createLicenseRoute, { voice_id: voiceId }),
    headers: bearer(owner.accessToken),
    payload: {
      platform_name: 'Upgrade Platform',
      scopes: ['audiobook'],
      description: 'Narration of audiobook chapters for the tests',
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    },
  });
  expect(licensed.statusCode, licensed.body).toBe(201);
  await origin.database.db.update(voices).set({ model: RETIRED_MODEL }).where(eq(voices.id, voiceId));
  await origin.database.db.update(voiceEmbeddings).set({ model: RETIRED_MODEL }).where(eq(voiceEmbeddings.voiceId, voiceId));
  return { owner, voiceId };
}

const reenroll = (owner: Owner, voiceId: string, audio: Uint8Array[] = recordings()) =>
  inject({
    method: 'POST',
    url: pathOf(reenrollVoiceRoute, { voice_id: voiceId }),
    headers: bearer(owner.accessToken),
    payload: audioForm({ audio }, {}),
  });

const listed = async (owner: Owner) =>
  voiceListSchema.parse((await inject({ method: 'GET', url: pathOf(listVoicesRoute), headers: bearer(owner.accessToken) })).json()).voices;

/** The record the edge holds for the voice: the newest one published. */
async function published(voiceId: string) {
  const [row] = await origin.database.db
    .select()
    .from(edgeOutbox)
    .where(eq(edgeOutbox.entityKey, voiceId))
    .orderBy(desc(edgeOutbox.id))
    .limit(1);
  return (row!.payload as { record: { consent_status: string; licenses: unknown[] } | null }).record;
}

const storedVoiceprint = async (voiceId: string) =>
  (
    await origin.database.db
      .select({ model: voiceEmbeddings.model, text: sql<string>`${voiceEmbeddings.embedding}::text` })
      .from(voiceEmbeddings)
      .where(eq(voiceEmbeddings.voiceId, voiceId))
  )[0]!;

describe('POST /api/v1/voices/{voice_id}/re-enroll', () => {
  it('gives a voice of a retired model a voiceprint of the current one, keeping its id, consent and licences', async () => {
    const { owner, voiceId } = await licensedVoiceOfRetiredModel();
    expect(await listed(owner)).toEqual([expect.objectContaining({ voice_id: voiceId, model: RETIRED_MODEL, voiceprint_current: false })]);

    const response = await reenroll(owner, voiceId);
    expect(response.statusCode, response.body).toBe(200);
    const voice = enrolledVoiceSchema.parse(response.json());
    expect(voice).toMatchObject({ voice_id: voiceId, name: 'Narrator', status: 'ready', model: engine.model.name });
    expect(voice.quality.files).toHaveLength(3);

    expect(await listed(owner)).toEqual([
      expect.objectContaining({ voice_id: voiceId, model: engine.model.name, voiceprint_current: true, consent_status: 'active' }),
    ]);
    expect((await storedVoiceprint(voiceId)).model).toBe(engine.model.name);
    const record = await published(voiceId);
    expect(record).toMatchObject({ consent_status: 'active', licenses: [expect.objectContaining({ platform_name: 'Upgrade Platform' })] });
    const events = await origin.database.db
      .select()
      .from(domainEvents)
      .where(eq(domainEvents.ownerId, owner.userId))
      .orderBy(asc(domainEvents.id));
    expect(events.at(-1)!.payload).toMatchObject({
      event: 'enrollment.complete',
      voice_id: voiceId,
      model: engine.model.name,
      status: 'ready',
    });
  });

  it('holds a re-enrollment that resembles another owner: the edge record grants nothing until an administrator clears it', async () => {
    const { owner, voiceId } = await licensedVoiceOfRetiredModel();
    await otherOwnersVoice((REVIEW + STRICT) / 2);

    const response = await reenroll(owner, voiceId);
    expect(response.statusCode, response.body).toBe(200);
    expect(enrolledVoiceSchema.parse(response.json()).status).toBe('pending_review');
    expect(await published(voiceId)).toMatchObject({ consent_status: 'unknown', licenses: [] });
    // Consent and licence are kept, only withheld: the owner's list still shows the consent.
    expect(await listed(owner)).toEqual([expect.objectContaining({ status: 'pending_review', consent_status: 'active' })]);
    expectProblem(await reenroll(owner, voiceId), 409, 'voice_under_review');

    const cleared = await inject({
      method: 'POST',
      url: pathOf(decideVoiceReviewRoute, { voice_id: voiceId }),
      headers: bearer(admin.accessToken),
      payload: { decision: 'clear' },
    });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(await published(voiceId)).toMatchObject({ consent_status: 'active', licenses: [expect.objectContaining({ status: 'active' })] });
  });

  it("refuses a voiceprint above another owner's strict point with 409 and keeps the old one", async () => {
    const { owner, voiceId } = await licensedVoiceOfRetiredModel();
    const before = await storedVoiceprint(voiceId);
    await otherOwnersVoice(STRICT + 0.05);

    expectProblem(await reenroll(owner, voiceId), 409, 'identity_conflict');
    expect(await storedVoiceprint(voiceId)).toEqual(before);
    expect(await listed(owner)).toEqual([expect.objectContaining({ status: 'ready', model: RETIRED_MODEL, voiceprint_current: false })]);
    expect(await published(voiceId)).toMatchObject({ consent_status: 'active' });
  });

  it("answers another owner's voice and a missing one with 404 before any audio is processed", async () => {
    const { voiceId } = await licensedVoiceOfRetiredModel();
    const stranger = await loggedIn(origin);
    // Silence would be refused as no_speech if it were processed.
    expectProblem(await reenroll(stranger, voiceId, [silentWav(3)]), 404, 'not_found');
    expectProblem(await reenroll(stranger, randomUUID(), [silentWav(3)]), 404, 'not_found');
    expect((await storedVoiceprint(voiceId)).model).toBe(RETIRED_MODEL);
  });

  it('refuses a form without audio, unusable audio and unknown fields, and changes nothing', async () => {
    const { owner, voiceId } = await licensedVoiceOfRetiredModel();
    expectProblem(await reenroll(owner, voiceId, []), 422, 'validation_failed');
    expectProblem(await reenroll(owner, voiceId, [silentWav(3)]), 422, 'no_speech');
    const withName = await inject({
      method: 'POST',
      url: pathOf(reenrollVoiceRoute, { voice_id: voiceId }),
      headers: bearer(owner.accessToken),
      payload: audioForm({ audio: recordings() }, { name: 'Renamed' }),
    });
    expectProblem(withName, 422, 'validation_failed');
    expectProblem(
      await inject({
        method: 'POST',
        url: pathOf(reenrollVoiceRoute, { voice_id: voiceId }),
        payload: audioForm({ audio: recordings() }, {}),
      }),
      401,
      'authentication_required',
    );
    expect((await storedVoiceprint(voiceId)).model).toBe(RETIRED_MODEL);
    const events = await origin.database.db
      .select()
      .from(domainEvents)
      .where(eq(domainEvents.ownerId, owner.userId))
      .orderBy(asc(domainEvents.id));
    expect(events.at(-1)!.payload).toMatchObject({ event: 'enrollment.failed', reason: 'no_speech' });
  });
});
