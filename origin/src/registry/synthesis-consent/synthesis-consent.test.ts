import { auditRecordSchema, PROBLEM_CONTENT_TYPE, pathOf, voiceIndexRecordSchema } from '@vip/shared-schema';
import { setSynthesisConsentRoute } from '@vip/shared-schema/routes/origin/registry/synthesis-consent';
import { asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { auditPending, edgeOutbox, voices } from '../../db/schema.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../../testing/origin.js';
import { insertTestVoice } from '../../testing/voices.js';

let origin: TestOrigin;
let owner: Awaited<ReturnType<typeof loggedIn>>;
beforeAll(async () => {
  origin = await startTestOrigin();
  owner = await loggedIn(origin);
});
afterAll(() => origin?.close());

const setSynthesisConsent = (voiceId: string, payload: unknown, token = owner.accessToken) =>
  origin.app.inject({
    method: 'PUT',
    url: pathOf(setSynthesisConsentRoute, { voice_id: voiceId }),
    headers: bearer(token),
    payload: payload as object,
  });

const outboxRowsFor = (voiceId: string) =>
  origin.database.db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, voiceId)).orderBy(asc(edgeOutbox.id));

const auditRecordsFor = async (voiceId: string) => {
  const rows = await origin.database.db.select().from(auditPending).where(sql`${auditPending.record}->>'voice_id' = ${voiceId}`);
  return rows.map((row) => auditRecordSchema.parse(row.record)).sort((a, b) => a.decided_at.localeCompare(b.decided_at));
};

describe('PUT /api/v1/voices/{voice_id}/consent', () => {
  it('grants and withdraws synthesis consent, publishing each state to the edge outbox', async () => {
    const voiceId = await insertTestVoice(origin.database.db, owner.userId);

    const granted = await setSynthesisConsent(voiceId, { status: 'active' });
    expect(granted.statusCode).toBe(200);
    expect(granted.json()).toEqual({ voice_id: voiceId, consent_status: 'active' });
    const withdrawn = await setSynthesisConsent(voiceId, { status: 'withdrawn' });
    expect(withdrawn.json()).toEqual({ voice_id: voiceId, consent_status: 'withdrawn' });

    const [voice] = await origin.database.db.select().from(voices).where(eq(voices.id, voiceId));
    expect(voice!.consentStatus).toBe('withdrawn');
    const rows = await outboxRowsFor(voiceId);
    expect(rows.map((row) => row.payload)).toEqual([
      { kind: 'voice', voice_id: voiceId, record: { voice_id: voiceId, owner_id: owner.userId, consent_status: 'active', licenses: [] } },
      {
        kind: 'voice',
        voice_id: voiceId,
        record: { voice_id: voiceId, owner_id: owner.userId, consent_status: 'withdrawn', licenses: [] },
      },
    ]);
    expect(rows[1]!.id).toBeGreaterThan(rows[0]!.id);
    for (const row of rows) voiceIndexRecordSchema.parse((row.payload as { record: unknown }).record);
  });

  it('queues one consent.changed audit record per change, by the owner', async () => {
    const voiceId = await insertTestVoice(origin.database.db, owner.userId);
    await setSynthesisConsent(voiceId, { status: 'active' });
    await setSynthesisConsent(voiceId, { status: 'withdrawn' });
    const records = await auditRecordsFor(voiceId);
    expect(records).toHaveLength(2);
    expect(records[1]).toMatchObject({
      kind: 'consent.changed',
      voice_id: voiceId,
      action: 'changed',
      reason: 'consent_withdrawn',
      consent_status: 'withdrawn',
      decision: null,
      caller_type: 'user',
      caller_id: owner.userId,
    });
    expect(records[0]!.check_id).not.toBe(records[1]!.check_id);
  });

  it('nudges the edge outbox sender after the commit, so a withdrawal is pushed at once', async () => {
    const voiceId = await insertTestVoice(origin.database.db, owner.userId, { consentStatus: 'active' });
    const nudge = vi.spyOn(origin.outbox, 'nudge');
    try {
      await setSynthesisConsent(voiceId, { status: 'withdrawn' });
      expect(nudge).toHaveBeenCalledTimes(1);
    } finally {
      nudge.mockRestore();
    }
  });

  it('changes, publishes and audits nothing when the voice already has that state', async () => {
    const voiceId = await insertTestVoice(origin.database.db, owner.userId);
    await setSynthesisConsent(voiceId, { status: 'active' });
    const again = await setSynthesisConsent(voiceId, { status: 'active' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ voice_id: voiceId, consent_status: 'active' });
    expect(await outboxRowsFor(voiceId)).toHaveLength(1);
    expect(await auditRecordsFor(voiceId)).toHaveLength(1);
  });

  it("lets an admin set any owner's voice", async () => {
    const admin = await loggedIn(origin, 'admin');
    const voiceId = await insertTestVoice(origin.database.db, owner.userId);
    const response = await setSynthesisConsent(voiceId, { status: 'active' }, admin.accessToken);
    expect(response.statusCode).toBe(200);
    expect((await auditRecordsFor(voiceId))[0]!.caller_id).toBe(admin.userId);
  });
});

describe('PUT /api/v1/voices/{voice_id}/consent errors', () => {
  it("answers 404 for another owner's voice, exactly as for a missing one, and changes nothing", async () => {
    const stranger = await loggedIn(origin);
    const voiceId = await insertTestVoice(origin.database.db, owner.userId);
    const foreign = await setSynthesisConsent(voiceId, { status: 'active' }, stranger.accessToken);
    const missing = await setSynthesisConsent(crypto.randomUUID(), { status: 'active' }, stranger.accessToken);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
    expect({ ...foreign.json(), instance: '', request_id: '' }).toEqual({ ...missing.json(), instance: '', request_id: '' });
    expect(await outboxRowsFor(voiceId)).toHaveLength(0);
    expect(await auditRecordsFor(voiceId)).toHaveLength(0);
  });

  it('refuses a status other than active or withdrawn with 422 naming the field', async () => {
    const voiceId = await insertTestVoice(origin.database.db, owner.userId);
    for (const status of ['unknown', 'yes', 1]) {
      const response = await setSynthesisConsent(voiceId, { status });
      expect(response.statusCode).toBe(422);
      expect(response.json().errors).toEqual([{ field: 'body.status', message: expect.any(String) }]);
    }
    const missing = await setSynthesisConsent(voiceId, {});
    expect(missing.json().errors).toEqual([{ field: 'body.status', message: expect.any(String) }]);
  });

  it('refuses a malformed voice id with 422 and a missing token with 401', async () => {
    const malformed = await setSynthesisConsent('not-a-uuid', { status: 'active' });
    expect(malformed.statusCode).toBe(422);
    expect(malformed.json().errors).toEqual([{ field: 'params.voice_id', message: expect.any(String) }]);
    const anonymous = await origin.app.inject({
      method: 'PUT',
      url: pathOf(setSynthesisConsentRoute, { voice_id: crypto.randomUUID() }),
      payload: { status: 'active' },
    });
    expect(anonymous.statusCode).toBe(401);
  });
});
