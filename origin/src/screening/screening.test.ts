import { randomUUID } from 'node:crypto';
import { type AuditRecord, limits, pathOf, screeningResultSchema } from '@vip/shared-schema';
import { screenSampleRoute } from '@vip/shared-schema/routes/origin/screening';
import { and, eq, inArray } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auditPending, domainEvents, licenses } from '../db/schema.js';
import { atStartOfRateWindow, bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { platformKey } from '../testing/platforms.js';
import { expectProblem } from '../testing/problem.js';
import { audioForm, EMBEDDING_LIKE, hasCalibratedModel, silentWav, speakerRecordings, startTestEngine } from '../testing/voiceprint.js';
import { insertEnrolledVoice } from '../testing/voices.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';

const SCREENING_PER_MINUTE = 4;
const LICENSING_URL = 'https://vip.example/licensing';

let engine: VoiceprintEngine;
let origin: TestOrigin;
beforeAll(async () => {
  // A registry of a handful of voices, designed as such: at the default design size (100,000 voices)
  // the search point misses most single short recordings of an enrolled speaker (the model card's
  // 1:N table), which is the point's purpose there, not what these tests are about.
  engine = await startTestEngine({ threads: 2, searchTargets: { designRegistrySize: 10 } });
  origin = await startTestOrigin({
    voiceprint: engine,
    protection: {
      screeningPerMinute: SCREENING_PER_MINUTE,
      comparePerMinute: 60,
      licenseRequestsPerMinute: 10,
      licensingUrl: LICENSING_URL,
    },
  });
});
afterEach(() => {
  for (const line of origin.logs) expect(line).not.toMatch(EMBEDDING_LIKE);
});
afterAll(async () => {
  await origin?.close();
  await engine?.close();
});

const screen = (headers: Record<string, string>, files: Record<string, Uint8Array | Uint8Array[]>, fields: Record<string, string>) =>
  origin.app.inject({ method: 'POST', url: pathOf(screenSampleRoute), headers, payload: audioForm(files, fields) });

const asKey = (apiKey: string) => ({ 'x-api-key': apiKey });

function expectScreening(response: LightMyRequestResponse) {
  expect(response.statusCode, response.body).toBe(200);
  expect(response.body).not.toMatch(EMBEDDING_LIKE);
  const result = screeningResultSchema.parse(response.json());
  expect(result.model).toBe(engine.model.name);
  return result;
}

const detectedEvents = (voiceIds: string[]) =>
  origin.database.db
    .select()
    .from(domainEvents)
    .where(and(eq(domainEvents.eventType, 'voice.detected'), inArray(domainEvents.voiceId, voiceIds)));

const pendingRecords = async () => (await origin.database.db.select().from(auditPending)).map((row) => row.record as AuditRecord);

async function auditRecordOf(checkId: string): Promise<AuditRecord> {
  const [row] = await origin.database.db.select().from(auditPending).where(eq(auditPending.checkId, checkId));
  return row!.record as AuditRecord;
}

describe('POST /api/v1/protect/screen', () => {
  it("finds the enrolled voice another recording is of, and tells its owner; the audit entry holds only the sample's hash and the matches", async (context) => {
    if (!hasCalibratedModel(engine)) context.skip();
    const owner = await loggedIn(origin);
    const platform = await platformKey(origin, 'Screen');
    const recordings = speakerRecordings('so762:SPEAKER9612', 0, 6);
    const voiceId = await insertEnrolledVoice(origin.database.db, engine, owner.userId, recordings.slice(0, 5));

    const result = expectScreening(await screen(asKey(platform.apiKey), { audio: recordings[5]! }, { platform_name: platform.name }));
    const match = result.matches.find((each) => each.voice_id === voiceId);
    expect(match, JSON.stringify(result)).toBeDefined();
    expect(result.matches[0]!.voice_id).toBe(voiceId);
    expect(match!.license_url).toBe(`${LICENSING_URL}?voice_id=${voiceId}`);
    expect(match!.confidence).toBeGreaterThan(0);
    expect(match!.confidence).toBeLessThanOrEqual(1);
    // Best first.
    const confidences = result.matches.map((each) => each.confidence);
    expect(confidences).toEqual([...confidences].sort((a, b) => b - a));

    const events = await detectedEvents([voiceId]);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toEqual({
      event: 'voice.detected',
      voice_id: voiceId,
      timestamp: expect.any(String),
      owner_id: owner.userId,
      platform: platform.name,
      confidence: match!.confidence,
      audio_url: null,
      action_required: true,
    });

    const record = await auditRecordOf(result.check_id);
    expect(record).toMatchObject({
      kind: 'screening',
      action: 'screened',
      platform_name: platform.name,
      caller_type: 'api_key',
      voice_id: null,
    });
    expect(record.reason).toMatch(/^sample=sha256:[0-9a-f]{64};matches=/);
    expect(record.reason).toContain(`${voiceId}:${match!.confidence.toFixed(4)}:`);
    expect(JSON.stringify(record)).not.toMatch(EMBEDDING_LIKE);

    // The owner's timeline: an entry under the voice, naming the platform and this match only.
    const underVoice = (await pendingRecords()).filter((each) => each.kind === 'screening' && each.voice_id === voiceId);
    expect(underVoice).toEqual([
      expect.objectContaining({
        platform_name: platform.name,
        action: 'screened',
        reason: `screening_match:${result.check_id}:${match!.confidence.toFixed(4)}`,
        license_status: 'unlicensed',
        caller_id: null,
      }),
    ]);
    const otherVoices = result.matches.filter((each) => each.voice_id !== voiceId).map((each) => each.voice_id);
    for (const other of otherVoices) expect(underVoice[0]!.reason).not.toContain(other);
    expect(underVoice[0]!.reason).not.toContain('sample=');
  });

  it('screens several recordings of one speaker as one sample, combined as an enrollment combines its files', async (context) => {
    if (!hasCalibratedModel(engine)) context.skip();
    const owner = await loggedIn(origin);
    const platform = await platformKey(origin, 'Screen');
    const recordings = speakerRecordings('so762:SPEAKER9612', 0, 8);
    const voiceId = await insertEnrolledVoice(origin.database.db, engine, owner.userId, recordings.slice(0, 5));
    const sample = recordings.slice(5, 8);

    const result = expectScreening(await screen(asKey(platform.apiKey), { audio: sample }, { platform_name: platform.name }));
    expect(result.matches[0]?.voice_id, JSON.stringify(result)).toBe(voiceId);
    const combined = await engine.embedMany(sample, [], { minSpeechSeconds: 0 });
    expect((await auditRecordOf(result.check_id)).reason).toContain(`sample=${engine.embeddingHash(combined.embedding, combined.model)};`);
  });

  it('answers no match for a speaker nobody enrolled, and tells no one', async (context) => {
    if (!hasCalibratedModel(engine)) context.skip();
    const owner = await loggedIn(origin);
    const platform = await platformKey(origin, 'Screen');
    const voiceId = await insertEnrolledVoice(origin.database.db, engine, owner.userId, speakerRecordings('so762:SPEAKER9623', 0, 5));
    const [stranger] = speakerRecordings('dsp20:16307130260', 0, 1);
    const result = expectScreening(await screen(asKey(platform.apiKey), { audio: stranger! }, { platform_name: platform.name }));
    expect(result.matches).toEqual([]);
    expect(await detectedEvents([voiceId])).toEqual([]);
    expect((await auditRecordOf(result.check_id)).reason).toMatch(/;matches=$/);
    expect((await pendingRecords()).filter((each) => each.voice_id === voiceId && each.kind === 'screening')).toEqual([]);
  });

  it('still names a voice the platform is licensed for, without telling its owner', async (context) => {
    if (!hasCalibratedModel(engine)) context.skip();
    const owner = await loggedIn(origin);
    const platform = await platformKey(origin, 'Screen');
    const recordings = speakerRecordings('so762:SPEAKER9633', 0, 6);
    const voiceId = await insertEnrolledVoice(origin.database.db, engine, owner.userId, recordings.slice(0, 5));
    const now = origin.runtime.clock.now();
    await origin.database.db.insert(licenses).values({
      id: randomUUID(),
      voiceId,
      platformName: platform.name,
      scopes: ['audiobook'],
      description: 'Narration of audiobook chapters for the tests',
      expiresAt: new Date(now.getTime() + 86_400_000),
      tokenHash: randomUUID(),
      createdAt: now,
      updatedAt: now,
    });
    const result = expectScreening(await screen(asKey(platform.apiKey), { audio: recordings[5]! }, { platform_name: platform.name }));
    expect(result.matches.map((each) => each.voice_id)).toContain(voiceId);
    expect(await detectedEvents([voiceId])).toEqual([]);
  });

  it('lets an administrator screen for a named platform', async () => {
    const admin = await loggedIn(origin, 'admin');
    const [recording] = speakerRecordings('so762:SPEAKER9608', 0, 1);
    const result = expectScreening(await screen(bearer(admin.accessToken), { audio: recording! }, { platform_name: 'Any Platform' }));
    expect(await auditRecordOf(result.check_id)).toMatchObject({
      caller_type: 'user',
      caller_id: admin.userId,
      platform_name: 'Any Platform',
    });
  });
});

describe('POST /api/v1/protect/screen: errors and authorization', () => {
  it('refuses a call without a credential, with a wrong key, and from an owner', async () => {
    const [recording] = speakerRecordings('so762:SPEAKER9608', 0, 1);
    expectProblem(await screen({}, { audio: recording! }, { platform_name: 'X' }), 401, 'authentication_required');
    expectProblem(await screen(asKey('vip_not-a-key'), { audio: recording! }, { platform_name: 'X' }), 401, 'invalid_credentials');
    const owner = await loggedIn(origin);
    expectProblem(await screen(bearer(owner.accessToken), { audio: recording! }, { platform_name: 'X' }), 403, 'forbidden');
  });

  it("refuses a platform_name that is not the key's (403) and a missing or malformed one (422)", async () => {
    const platform = await platformKey(origin, 'Screen');
    const other = await platformKey(origin, 'Screen');
    const [recording] = speakerRecordings('so762:SPEAKER9608', 0, 1);
    expectProblem(await screen(asKey(platform.apiKey), { audio: recording! }, { platform_name: other.name }), 403, 'platform_mismatch');
    const missing = expectProblem(await screen(asKey(platform.apiKey), { audio: recording! }, {}), 422, 'validation_failed');
    expect(missing.errors?.map((error) => error.field)).toEqual(['body.platform_name']);
    const malformed = expectProblem(
      await screen(asKey(platform.apiKey), { audio: recording! }, { platform_name: '<script>' }),
      422,
      'validation_failed',
    );
    expect(malformed.errors?.map((error) => error.field)).toEqual(['body.platform_name']);
  });

  it('refuses a form without audio, with more files than a sample may have, with unknown fields, as JSON, and audio that is not speech', async () => {
    const [recording, second] = speakerRecordings('so762:SPEAKER9608', 0, 2);
    // A key per pair of calls, so the screening limit stays out of the way.
    const keyed = async () => {
      const platform = await platformKey(origin, 'Screen');
      return { headers: asKey(platform.apiKey), fields: { platform_name: platform.name } };
    };
    const first = await keyed();
    expect(expectProblem(await screen(first.headers, {}, first.fields), 422, 'validation_failed').errors?.[0]?.field).toBe('body.audio');
    const tooMany = audioForm(
      { audio: Array.from({ length: limits.screenMaxFiles + 1 }, (_, i) => (i % 2 ? recording! : second!)) },
      first.fields,
    );
    const refused = expectProblem(
      await origin.app.inject({ method: 'POST', url: pathOf(screenSampleRoute), headers: first.headers, payload: tooMany }),
      422,
      'validation_failed',
    );
    expect(refused.errors?.[0]?.message).toBe(`at most ${limits.screenMaxFiles} file(s)`);
    const next = await keyed();
    const unknown = await screen(next.headers, { audio: recording! }, { ...next.fields, voice_id: randomUUID() });
    expect(expectProblem(unknown, 422, 'validation_failed').errors?.[0]?.field).toBe('body.voice_id');
    expectProblem(
      await origin.app.inject({ method: 'POST', url: pathOf(screenSampleRoute), headers: next.headers, payload: next.fields }),
      415,
      'unsupported_media_type',
    );
    const last = await keyed();
    expectProblem(await screen(last.headers, { audio: silentWav(3) }, last.fields), 422, 'no_speech');
    expectProblem(
      await screen(last.headers, { audio: new TextEncoder().encode('not audio at all') }, last.fields),
      422,
      'unsupported_format',
    );
  });

  it('limits screenings per key: past the limit 429 with Retry-After, while another key goes on', async () => {
    const platform = await platformKey(origin, 'Screen');
    const other = await platformKey(origin, 'Screen');
    const tiny = silentWav(1);
    atStartOfRateWindow(origin);
    // Refused forms count too: the limit is on calls, before anything is read.
    for (let call = 0; call < SCREENING_PER_MINUTE; call++) {
      expect((await screen(asKey(platform.apiKey), { audio: tiny }, { platform_name: platform.name })).statusCode).not.toBe(429);
    }
    const limited = await screen(asKey(platform.apiKey), { audio: tiny }, { platform_name: platform.name });
    expectProblem(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await screen(asKey(other.apiKey), { audio: tiny }, { platform_name: other.name })).statusCode).not.toBe(429);
    // The next window admits the key again.
    origin.runtime.advance(retryAfter * 1000);
    expect((await screen(asKey(platform.apiKey), { audio: tiny }, { platform_name: platform.name })).statusCode).not.toBe(429);
  });
});
