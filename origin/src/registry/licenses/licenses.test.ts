import {
  auditRecordSchema,
  createdLicenseSchema,
  LICENSE_TOKEN_PREFIX,
  licenseListSchema,
  licenseSchema,
  PROBLEM_CONTENT_TYPE,
  sha256Hex,
  type VoiceIndexRecord,
} from '@vip/shared-schema';
import { and, asc, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditPending, domainEvents, edgeOutbox, licenses } from '../../db/schema.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../../testing/origin.js';
import { insertTestVoice } from '../../testing/voices.js';
import { licenseExpiryRound } from './expiry.js';

let origin: TestOrigin;
let owner: Awaited<ReturnType<typeof loggedIn>>;
let platformName: string;
let otherPlatformName: string;
beforeAll(async () => {
  origin = await startTestOrigin();
  owner = await loggedIn(origin);
  const admin = await loggedIn(origin, 'admin');
  [platformName, otherPlatformName] = ['Narrator.io', 'Other Platform'];
  for (const name of [platformName, otherPlatformName]) {
    const created = await origin.app.inject({
      method: 'POST',
      url: '/api/v1/platforms',
      headers: bearer(admin.accessToken),
      payload: { name },
    });
    expect(created.statusCode).toBe(201);
  }
});
afterAll(() => origin?.close());

const DAY_MS = 24 * 60 * 60 * 1000;
const inDays = (days: number) => new Date(origin.runtime.clock.now().getTime() + days * DAY_MS).toISOString();

const call = (method: 'GET' | 'POST', url: string, payload?: unknown, token = owner.accessToken) =>
  origin.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload: payload as object }) });

const newVoice = () => insertTestVoice(origin.database.db, owner.userId, { consentStatus: 'active' });

async function createLicense(voiceId: string, fields: Record<string, unknown> = {}) {
  const response = await call('POST', `/api/v1/voices/${voiceId}/licenses`, {
    platform_name: platformName,
    scopes: ['audiobook', 'podcast'],
    expires_at: inDays(30),
    ...fields,
  });
  expect(response.statusCode).toBe(201);
  return createdLicenseSchema.parse(response.json());
}

const voiceRecords = async (voiceId: string) => {
  const rows = await origin.database.db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, voiceId)).orderBy(asc(edgeOutbox.id));
  return rows.map((row) => ({ version: row.id, record: (row.payload as { record: VoiceIndexRecord | null }).record }));
};
/** The owner's events of a voice (each licence change also has the platform's copy: platformEventsFor). */
const eventsFor = (voiceId: string) =>
  origin.database.db
    .select()
    .from(domainEvents)
    .where(and(eq(domainEvents.voiceId, voiceId), isNull(domainEvents.platformName)))
    .orderBy(asc(domainEvents.id));
const platformEventsFor = (voiceId: string) =>
  origin.database.db
    .select()
    .from(domainEvents)
    .where(and(eq(domainEvents.voiceId, voiceId), isNotNull(domainEvents.platformName)))
    .orderBy(asc(domainEvents.id));
const auditRecordsFor = async (voiceId: string) =>
  (await origin.database.db.select().from(auditPending).where(sql`${auditPending.record}->>'voice_id' = ${voiceId}`)).map((row) =>
    auditRecordSchema.parse(row.record),
  );

describe('POST /api/v1/voices/{voice_id}/licenses', () => {
  it('creates a licence, shows its token once and stores only the hash', async () => {
    const voiceId = await newVoice();
    const expiresAt = inDays(30);
    const licence = await createLicense(voiceId, { expires_at: expiresAt });
    expect(licence).toMatchObject({ voice_id: voiceId, platform_name: platformName, scopes: ['audiobook', 'podcast'], status: 'active' });
    expect(Date.parse(licence.expires_at)).toBe(Date.parse(expiresAt));
    expect(licence.license_token).toMatch(new RegExp(`^${LICENSE_TOKEN_PREFIX}[A-Za-z0-9_-]{43}$`));

    const [row] = await origin.database.db.select().from(licenses).where(eq(licenses.id, licence.license_id));
    expect(row!.tokenHash).toBe(await sha256Hex(licence.license_token));
    expect(JSON.stringify(row)).not.toContain(licence.license_token);
  });

  it('publishes the voice with its licence to the edge index, with the token hash the gate matches', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    const [update] = await voiceRecords(voiceId);
    expect(update!.record).toEqual({
      voice_id: voiceId,
      owner_id: owner.userId,
      consent_status: 'active',
      licenses: [
        {
          license_id: licence.license_id,
          platform_name: platformName,
          scopes: ['audiobook', 'podcast'],
          expires_at: licence.expires_at,
          status: 'active',
          token_hash: await sha256Hex(licence.license_token),
        },
      ],
    });
  });

  it('queues a license.changed audit record and no webhook event (the spec has no creation event)', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    expect(await auditRecordsFor(voiceId)).toEqual([
      expect.objectContaining({
        kind: 'license.changed',
        platform_name: platformName,
        reason: `license_created:${licence.license_id}`,
        consent_status: 'active',
        caller_type: 'user',
        caller_id: owner.userId,
      }),
    ]);
    expect(await eventsFor(voiceId)).toHaveLength(0);
  });

  it('lists licences without their tokens', async () => {
    const voiceId = await newVoice();
    const first = await createLicense(voiceId);
    const second = await createLicense(voiceId, { platform_name: otherPlatformName, scopes: ['gaming'] });
    const response = await call('GET', `/api/v1/voices/${voiceId}/licenses`);
    expect(response.statusCode).toBe(200);
    const { licenses: listed } = licenseListSchema.parse(response.json());
    expect(listed.map((licence) => licence.license_id)).toEqual([first.license_id, second.license_id]);
    expect(response.body).not.toContain(LICENSE_TOKEN_PREFIX);
    expect(response.body).not.toContain(await sha256Hex(first.license_token));
  });
});

describe('licence validation', () => {
  const attempt = async (fields: Record<string, unknown>) => {
    const voiceId = await newVoice();
    const response = await call('POST', `/api/v1/voices/${voiceId}/licenses`, {
      platform_name: platformName,
      scopes: ['audiobook'],
      expires_at: inDays(30),
      ...fields,
    });
    expect(response.statusCode).toBe(422);
    expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
    expect(await voiceRecords(voiceId)).toHaveLength(0);
    return response.json().errors as { field: string; message: string }[];
  };

  it('refuses empty, repeated or unknown scopes', async () => {
    expect(await attempt({ scopes: [] })).toEqual([{ field: 'body.scopes', message: expect.any(String) }]);
    expect(await attempt({ scopes: ['music', 'music'] })).toEqual([{ field: 'body.scopes', message: expect.stringContaining('repeat') }]);
    expect(await attempt({ scopes: ['radio'] })).toEqual([{ field: 'body.scopes.0', message: expect.any(String) }]);
  });

  it('refuses an expiry in the past, more than ten years ahead, or not a timestamp', async () => {
    expect(await attempt({ expires_at: inDays(-1) })).toEqual([{ field: 'body.expires_at', message: 'must be in the future' }]);
    expect(await attempt({ expires_at: inDays(3700) })).toEqual([{ field: 'body.expires_at', message: 'must be at most ten years ahead' }]);
    expect(await attempt({ expires_at: 'next tuesday' })).toEqual([{ field: 'body.expires_at', message: expect.any(String) }]);
  });

  it('refuses a platform name that is malformed or names no registered platform', async () => {
    expect(await attempt({ platform_name: '<script>' })).toEqual([{ field: 'body.platform_name', message: expect.any(String) }]);
    expect(await attempt({ platform_name: 'Nobody Registered This' })).toEqual([
      { field: 'body.platform_name', message: 'no registered platform has this name' },
    ]);
  });

  it('refuses unknown fields', async () => {
    expect(await attempt({ token: 'mine' })).toEqual([{ field: 'body.token', message: 'unknown field' }]);
  });
});

describe('licence owner scoping', () => {
  it("answers 404 for another owner's voice on every licence route and writes nothing", async () => {
    const stranger = await loggedIn(origin);
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    const base = `/api/v1/voices/${voiceId}/licenses`;
    const attempts = [
      call('POST', base, { platform_name: platformName, scopes: ['music'], expires_at: inDays(5) }, stranger.accessToken),
      call('GET', base, undefined, stranger.accessToken),
      call('POST', `${base}/${licence.license_id}/renew`, { expires_at: inDays(60) }, stranger.accessToken),
      call('POST', `${base}/${licence.license_id}/revoke`, undefined, stranger.accessToken),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.statusCode).toBe(404);
      expect(response.json().code).toBe('not_found');
    }
    expect(await voiceRecords(voiceId)).toHaveLength(1);
    expect(await eventsFor(voiceId)).toHaveLength(0);
  });

  it('answers 404 for a licence of another voice of the same owner', async () => {
    const [a, b] = [await newVoice(), await newVoice()];
    const licence = await createLicense(a);
    const response = await call('POST', `/api/v1/voices/${b}/licenses/${licence.license_id}/revoke`);
    expect(response.statusCode).toBe(404);
  });

  it('leaves no event, audit record or index update behind for a licence on an unknown voice', async () => {
    const voiceId = crypto.randomUUID();
    const response = await call('POST', `/api/v1/voices/${voiceId}/licenses`, {
      platform_name: platformName,
      scopes: ['music'],
      expires_at: inDays(5),
    });
    expect(response.statusCode).toBe(404);
    expect(await voiceRecords(voiceId)).toHaveLength(0);
    expect(await eventsFor(voiceId)).toHaveLength(0);
    expect(await auditRecordsFor(voiceId)).toHaveLength(0);
  });
});

describe('renew and revoke', () => {
  it('renews a licence: new expiry, same token, license.renewed event, index republished', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    const newExpiry = inDays(90);
    const response = await call('POST', `/api/v1/voices/${voiceId}/licenses/${licence.license_id}/renew`, { expires_at: newExpiry });
    expect(response.statusCode).toBe(200);
    const renewed = licenseSchema.parse(response.json());
    expect(renewed).toMatchObject({ license_id: licence.license_id, status: 'active' });
    expect(Date.parse(renewed.expires_at)).toBe(Date.parse(newExpiry));
    expect(response.body).not.toContain(LICENSE_TOKEN_PREFIX);

    const events = await eventsFor(voiceId);
    expect(events.map((event) => event.eventType)).toEqual(['license.renewed']);
    expect(events[0]!.ownerId).toBe(owner.userId);
    expect(events[0]!.payload).toMatchObject({
      event: 'license.renewed',
      voice_id: voiceId,
      license_id: licence.license_id,
      platform_name: platformName,
      expires_at: renewed.expires_at,
    });
    // The licensed platform's own copy, for its webhooks: its licence's fields, nothing of the owner's.
    const [copy] = await platformEventsFor(voiceId);
    expect(copy).toMatchObject({ eventType: 'license.renewed', ownerId: null, platformName });
    expect(copy!.payload).toEqual({
      event: 'license.renewed',
      voice_id: voiceId,
      timestamp: expect.any(String),
      license_id: licence.license_id,
      scopes: licence.scopes,
      expires_at: renewed.expires_at,
    });
    const records = await voiceRecords(voiceId);
    expect(records.at(-1)!.record!.licenses[0]).toMatchObject({
      expires_at: renewed.expires_at,
      token_hash: await sha256Hex(licence.license_token),
    });
  });

  it('revokes a licence: license.revoked event, dropped from the index; a second revoke changes nothing', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    const url = `/api/v1/voices/${voiceId}/licenses/${licence.license_id}/revoke`;
    const response = await call('POST', url);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ license_id: licence.license_id, status: 'revoked' });
    const again = await call('POST', url);
    expect(again.json()).toEqual({ license_id: licence.license_id, status: 'revoked' });

    expect((await eventsFor(voiceId)).map((event) => event.eventType)).toEqual(['license.revoked']);
    const records = await voiceRecords(voiceId);
    expect(records).toHaveLength(2);
    expect(records[1]!.record!.licenses).toEqual([]);
    const listed = licenseListSchema.parse((await call('GET', `/api/v1/voices/${voiceId}/licenses`)).json());
    expect(listed.licenses[0]).toMatchObject({ status: 'revoked', revoked_at: expect.any(String) });
    expect((await auditRecordsFor(voiceId)).map((record) => record.reason).sort()).toEqual(
      [`license_created:${licence.license_id}`, `license_revoked:${licence.license_id}`].sort(),
    );
  });

  it('refuses to renew a revoked licence with 409', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    await call('POST', `/api/v1/voices/${voiceId}/licenses/${licence.license_id}/revoke`);
    const response = await call('POST', `/api/v1/voices/${voiceId}/licenses/${licence.license_id}/renew`, { expires_at: inDays(10) });
    expect(response.statusCode).toBe(409);
    expect(response.json().code).toBe('conflict');
  });

  it('refuses a renewal into the past with 422', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    const response = await call('POST', `/api/v1/voices/${voiceId}/licenses/${licence.license_id}/renew`, { expires_at: inDays(-2) });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([{ field: 'body.expires_at', message: 'must be in the future' }]);
  });

  it('rolls the whole change back when a later step of the transaction fails', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    const db = origin.database.db;
    // Make the event insert, which follows the licence update, fail for this voice only.
    await db.execute(
      sql.raw(`create function refuse_event_${voiceId.replaceAll('-', '')}() returns trigger language plpgsql as $$
        begin if new.voice_id = '${voiceId}' then raise exception 'injected failure'; end if; return new; end $$`),
    );
    await db.execute(
      sql.raw(`create trigger refuse_event_${voiceId.replaceAll('-', '')} before insert on domain_events
        for each row execute function refuse_event_${voiceId.replaceAll('-', '')}()`),
    );
    const response = await call('POST', `/api/v1/voices/${voiceId}/licenses/${licence.license_id}/revoke`);
    expect(response.statusCode).toBe(500);

    const [row] = await db.select().from(licenses).where(eq(licenses.id, licence.license_id));
    expect(row!.status).toBe('active');
    expect(await voiceRecords(voiceId)).toHaveLength(1);
    expect(await auditRecordsFor(voiceId)).toHaveLength(1);
    expect(await eventsFor(voiceId)).toHaveLength(0);
  });
});

describe('licence expiry job', () => {
  /** One round of the job as its loop runs it, on the origin's own licence service. */
  const expiryRound = () => licenseExpiryRound(origin.licenses, origin.app.log)();

  it('expires licences past their expiry once, with license.expired each and one index update per voice', async () => {
    const voiceId = await newVoice();
    const shortLived = await createLicense(voiceId, { expires_at: inDays(1) });
    const alsoShortLived = await createLicense(voiceId, { expires_at: inDays(1), scopes: ['gaming'] });
    const longLived = await createLicense(voiceId, { expires_at: inDays(10), scopes: ['music'] });
    origin.runtime.advance(2 * DAY_MS);
    try {
      await expiryRound();
      await expiryRound();
    } finally {
      origin.runtime.advance(-2 * DAY_MS);
    }
    const listed = licenseListSchema.parse((await call('GET', `/api/v1/voices/${voiceId}/licenses`)).json());
    expect(Object.fromEntries(listed.licenses.map((licence) => [licence.license_id, licence.status]))).toEqual({
      [shortLived.license_id]: 'expired',
      [alsoShortLived.license_id]: 'expired',
      [longLived.license_id]: 'active',
    });
    const events = await eventsFor(voiceId);
    expect(events.map((event) => event.eventType)).toEqual(['license.expired', 'license.expired']);
    expect(events.map((event) => (event.payload as { license_id: string }).license_id).sort()).toEqual(
      [shortLived.license_id, alsoShortLived.license_id].sort(),
    );
    expect(events[0]!.payload).toMatchObject({ platform_name: platformName });
    const updates = await voiceRecords(voiceId);
    expect(updates).toHaveLength(4);
    expect(updates.at(-1)!.record!.licenses.map((licence) => licence.license_id)).toEqual([longLived.license_id]);
    expect(await auditRecordsFor(voiceId)).toContainEqual(
      expect.objectContaining({ reason: `license_expired:${shortLived.license_id}`, caller_type: 'system', caller_id: null }),
    );
  });

  it('lets an expired licence be renewed, making it active again', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId, { expires_at: inDays(1) });
    origin.runtime.advance(2 * DAY_MS);
    try {
      await expiryRound();
    } finally {
      // Back to real time, where the owner's access token is valid.
      origin.runtime.advance(-2 * DAY_MS);
    }
    const response = await call('POST', `/api/v1/voices/${voiceId}/licenses/${licence.license_id}/renew`, { expires_at: inDays(30) });
    expect(response.statusCode).toBe(200);
    expect(response.json().status).toBe('active');
    expect((await eventsFor(voiceId)).map((event) => event.eventType)).toEqual(['license.expired', 'license.renewed']);
  });
});
