import { randomUUID } from 'node:crypto';
import {
  approvedLicenseRequestSchema,
  auditRecordSchema,
  createdLicenseRequestSchema,
  LICENSE_DESCRIPTION_MAX,
  LICENSE_TOKEN_PREFIX,
  licenseRequestListSchema,
  licenseRequestSchema,
  pathOf,
  type VoiceIndexRecord,
} from '@vip/shared-schema';
import {
  approveLicenseRequestRoute,
  declineLicenseRequestRoute,
  getLicenseRequestRoute,
  listLicenseRequestsRoute,
  requestLicenseRoute,
} from '@vip/shared-schema/routes/origin/license-requests';
import { setSynthesisConsentRoute } from '@vip/shared-schema/routes/origin/registry/synthesis-consent';
import { deleteVoiceRoute } from '@vip/shared-schema/routes/origin/voices';
import { and, asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditPending, domainEvents, edgeOutbox, licenses, webhookDeliveries } from '../db/schema.js';
import { atStartOfRateWindow, bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { platformKey } from '../testing/platforms.js';
import { expectProblem } from '../testing/problem.js';
import { insertTestVoice } from '../testing/voices.js';

const REQUESTS_PER_MINUTE = 5;

let origin: TestOrigin;
beforeAll(async () => {
  origin = await startTestOrigin({
    protection: {
      screeningPerMinute: 60,
      comparePerMinute: 60,
      licenseRequestsPerMinute: REQUESTS_PER_MINUTE,
      licensingUrl: 'https://vip.example/licensing',
    },
  });
});
afterAll(() => origin?.close());

type Owner = Awaited<ReturnType<typeof loggedIn>>;
type Platform = Awaited<ReturnType<typeof platformKey>>;

const DAY_MS = 24 * 60 * 60 * 1000;
const inDays = (days: number) => new Date(origin.runtime.clock.now().getTime() + days * DAY_MS).toISOString();

/** What the asking platform says it will use the voice for. */
const ASKED_USES = 'Narration of our English audiobook catalogue, sold as downloads and streamed';

const askAs = (platform: Platform, voiceId: string, fields: Record<string, unknown> = {}) =>
  origin.app.inject({
    method: 'POST',
    url: pathOf(requestLicenseRoute, { voice_id: voiceId }),
    headers: { 'x-api-key': platform.apiKey },
    payload: { platform_name: platform.name, scopes: ['audiobook'], expires_at: inDays(30), description: ASKED_USES, ...fields },
  });
const ownerCall = (owner: Owner, method: 'GET' | 'POST', url: string, payload?: object) =>
  origin.app.inject({ method, url, headers: bearer(owner.accessToken), ...(payload ? { payload } : {}) });
const readAs = (headers: Record<string, string>, requestId: string) =>
  origin.app.inject({ method: 'GET', url: pathOf(getLicenseRequestRoute, { request_id: requestId }), headers });

async function setup() {
  const owner = await loggedIn(origin);
  const platform = await platformKey(origin, 'Requester');
  const voiceId = await insertTestVoice(origin.database.db, owner.userId, { consentStatus: 'active' });
  return { owner, platform, voiceId };
}

async function pendingRequest(platform: Platform, voiceId: string, fields: Record<string, unknown> = {}) {
  const response = await askAs(platform, voiceId, fields);
  expect(response.statusCode, response.body).toBe(201);
  return createdLicenseRequestSchema.parse(response.json());
}

const eventsOf = (voiceId: string) =>
  origin.database.db.select().from(domainEvents).where(eq(domainEvents.voiceId, voiceId)).orderBy(asc(domainEvents.id));
const auditOf = async (voiceId: string) =>
  (await origin.database.db.select().from(auditPending).where(sql`${auditPending.record}->>'voice_id' = ${voiceId}`))
    .map((row) => auditRecordSchema.parse(row.record))
    .filter((record) => record.kind.startsWith('license.request'));

describe('licence requests: the platform asks, the owner answers', () => {
  it('records a request, tells the owner, and lists it for the owner', async () => {
    const { owner, platform, voiceId } = await setup();
    const created = await pendingRequest(platform, voiceId, {
      scopes: ['audiobook', 'podcast'],
      message: 'For our audiobook line',
      represented_by: 'counsel',
      compensation: '1 EUR per finished hour',
    });
    const terms = { description: ASKED_USES, represented_by: 'counsel', compensation: '1 EUR per finished hour' };
    expect(created).toMatchObject({
      voice_id: voiceId,
      platform_name: platform.name,
      scopes: ['audiobook', 'podcast'],
      ...terms,
      status: 'pending',
    });

    const [event] = await eventsOf(voiceId);
    expect(event).toMatchObject({ eventType: 'license.requested', ownerId: owner.userId, platformName: null });
    expect(event!.payload).toMatchObject({
      request_id: created.request_id,
      platform_name: platform.name,
      message: 'For our audiobook line',
      // The owner's webhook shows the terms asked for, as approving would record them.
      ...terms,
      description_source: 'stated',
    });
    expect(await auditOf(voiceId)).toMatchObject([
      {
        kind: 'license.requested',
        action: 'requested',
        platform_name: platform.name,
        caller_type: 'api_key',
        reason: `requested:${created.request_id}`,
      },
    ]);

    const listed = licenseRequestListSchema.parse(
      (await ownerCall(owner, 'GET', pathOf(listLicenseRequestsRoute, { voice_id: voiceId }))).json(),
    );
    expect(listed.requests.map((request) => [request.request_id, request.status])).toEqual([[created.request_id, 'pending']]);
    expect(listed.requests[0]).toMatchObject({ ...terms, description_source: 'stated' });
    expect(listed.next_cursor).toBeNull();
  });

  it('approves: a licence exactly as POST …/licenses makes it, published to the edge, and license.granted for the platform alone with the token sealed at rest', async () => {
    const { owner, platform, voiceId } = await setup();
    const created = await pendingRequest(platform, voiceId, { scopes: ['audiobook', 'podcast'], represented_by: 'union' });
    const expiresAt = inDays(60);
    const response = await ownerCall(
      owner,
      'POST',
      pathOf(approveLicenseRequestRoute, { voice_id: voiceId, request_id: created.request_id }),
      {
        scopes: ['audiobook'],
        expires_at: expiresAt,
      },
    );
    expect(response.statusCode, response.body).toBe(200);
    const approved = approvedLicenseRequestSchema.parse(response.json());
    expect(response.body).not.toContain(LICENSE_TOKEN_PREFIX);

    const [licence] = await origin.database.db.select().from(licenses).where(eq(licenses.id, approved.license_id));
    // The terms the request showed the owner, as they were shown.
    expect(licence).toMatchObject({
      voiceId,
      platformName: platform.name,
      scopes: ['audiobook'],
      status: 'active',
      description: ASKED_USES,
      descriptionSource: 'stated',
      representedBy: 'union',
      compensation: null,
    });
    expect(licence!.expiresAt.toISOString()).toBe(new Date(expiresAt).toISOString());
    const [published] = await origin.database.db
      .select()
      .from(edgeOutbox)
      .where(eq(edgeOutbox.entityKey, voiceId))
      .orderBy(sql`${edgeOutbox.id} desc`)
      .limit(1);
    const record = (published!.payload as { record: VoiceIndexRecord }).record;
    expect(record.licenses.map((each) => each.license_id)).toEqual([approved.license_id]);

    const granted = (await eventsOf(voiceId)).filter((event) => event.eventType === 'license.granted');
    expect(granted).toHaveLength(1);
    expect(granted[0]).toMatchObject({ ownerId: null, platformName: platform.name });
    const payload = granted[0]!.payload as Record<string, unknown>;
    expect(Object.keys(payload).sort()).toEqual([
      'compensation',
      'description',
      'description_source',
      'event',
      'expires_at',
      'license_id',
      'license_terms_sha256',
      'license_token',
      'represented_by',
      'request_id',
      'scopes',
      'timestamp',
      'voice_id',
    ]);
    expect(payload).toMatchObject({
      license_id: approved.license_id,
      request_id: created.request_id,
      scopes: ['audiobook'],
      description: ASKED_USES,
      represented_by: 'union',
      license_terms_sha256: record.licenses[0]!.terms_sha256,
    });
    // Never in the clear in the database: sealed under SECRETS_ENCRYPTION_KEYS, opened only to send.
    expect(String(payload.license_token)).toMatch(/^sealed:/);
    expect(JSON.stringify(payload)).not.toContain(LICENSE_TOKEN_PREFIX);

    const read = licenseRequestSchema.parse((await readAs({ 'x-api-key': platform.apiKey }, created.request_id)).json());
    expect(read).toMatchObject({ status: 'approved', license_id: approved.license_id, closed_reason: null });
    expect((await auditOf(voiceId)).map((each) => each.reason)).toContain(`approved:${created.request_id}:${approved.license_id}`);
    // Answered once.
    expectProblem(
      await ownerCall(owner, 'POST', pathOf(approveLicenseRequestRoute, { voice_id: voiceId, request_id: created.request_id }), {}),
      409,
      'conflict',
    );
  });

  it('declines: the platform reads the reason and gets license.request_declined; it may then ask again', async () => {
    const { owner, platform, voiceId } = await setup();
    const created = await pendingRequest(platform, voiceId);
    const response = await ownerCall(
      owner,
      'POST',
      pathOf(declineLicenseRequestRoute, { voice_id: voiceId, request_id: created.request_id }),
      {
        reason: 'Not for sale',
      },
    );
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ request_id: created.request_id, status: 'declined' });
    const read = licenseRequestSchema.parse((await readAs({ 'x-api-key': platform.apiKey }, created.request_id)).json());
    expect(read).toMatchObject({ status: 'declined', decline_reason: 'Not for sale', license_id: null });
    const declined = (await eventsOf(voiceId)).filter((event) => event.eventType === 'license.request_declined');
    expect(declined).toMatchObject([
      { ownerId: null, platformName: platform.name, payload: { request_id: created.request_id, reason: 'Not for sale' } },
    ]);
    expectProblem(
      await ownerCall(owner, 'POST', pathOf(declineLicenseRequestRoute, { voice_id: voiceId, request_id: created.request_id }), {}),
      409,
      'conflict',
    );
    await pendingRequest(platform, voiceId);
  });

  it('allows one pending request per voice and platform (409), not per voice', async () => {
    const { platform, voiceId } = await setup();
    await pendingRequest(platform, voiceId);
    expectProblem(await askAs(platform, voiceId), 409, 'conflict');
    await pendingRequest(await platformKey(origin, 'Requester'), voiceId);
  });

  it('closes pending requests when consent is withdrawn, and refuses new ones then', async () => {
    const { owner, platform, voiceId } = await setup();
    const created = await pendingRequest(platform, voiceId);
    const withdrawn = await origin.app.inject({
      method: 'PUT',
      url: pathOf(setSynthesisConsentRoute, { voice_id: voiceId }),
      headers: bearer(owner.accessToken),
      payload: { status: 'withdrawn' },
    });
    expect(withdrawn.statusCode, withdrawn.body).toBe(200);
    const read = licenseRequestSchema.parse((await readAs({ 'x-api-key': platform.apiKey }, created.request_id)).json());
    expect(read).toMatchObject({ status: 'closed', closed_reason: 'consent_withdrawn' });
    expect((await auditOf(voiceId)).map((each) => each.reason)).toContain(`consent_withdrawn:${created.request_id}`);
    expectProblem(await askAs(platform, voiceId), 409, 'conflict');
  });

  it('closes pending requests when the voice is deleted; the platform can still read its request', async () => {
    const { owner, platform, voiceId } = await setup();
    const created = await pendingRequest(platform, voiceId);
    const deleted = await origin.app.inject({
      method: 'DELETE',
      url: pathOf(deleteVoiceRoute, { voice_id: voiceId }),
      headers: bearer(owner.accessToken),
    });
    expect(deleted.statusCode, deleted.body).toBe(200);
    const read = licenseRequestSchema.parse((await readAs({ 'x-api-key': platform.apiKey }, created.request_id)).json());
    expect(read).toMatchObject({ status: 'closed', closed_reason: 'voice_deleted' });
    expectProblem(await askAs(platform, voiceId), 404, 'not_found');
  });

  it('pages the owner list newest first and filters by status', async () => {
    const { owner, voiceId } = await setup();
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) {
      ids.push((await pendingRequest(await platformKey(origin, 'Requester'), voiceId)).request_id);
      origin.runtime.advance(1000);
    }
    const first = licenseRequestListSchema.parse(
      (await ownerCall(owner, 'GET', `${pathOf(listLicenseRequestsRoute, { voice_id: voiceId })}?limit=2`)).json(),
    );
    expect(first.requests.map((request) => request.request_id)).toEqual([ids[2], ids[1]]);
    const second = licenseRequestListSchema.parse(
      (
        await ownerCall(owner, 'GET', `${pathOf(listLicenseRequestsRoute, { voice_id: voiceId })}?limit=2&cursor=${first.next_cursor}`)
      ).json(),
    );
    expect(second.requests.map((request) => request.request_id)).toEqual([ids[0]]);
    expect(second.next_cursor).toBeNull();
    const declinedOnly = await ownerCall(owner, 'GET', `${pathOf(listLicenseRequestsRoute, { voice_id: voiceId })}?status=declined`);
    expect(licenseRequestListSchema.parse(declinedOnly.json()).requests).toEqual([]);
    expectProblem(
      await ownerCall(owner, 'GET', `${pathOf(listLicenseRequestsRoute, { voice_id: voiceId })}?cursor=nonsense`),
      422,
      'validation_failed',
    );
  });
});

describe('licence requests: errors, authorization and limits', () => {
  it('refuses bad bodies with the field named', async () => {
    const { platform, voiceId } = await setup();
    const fieldsOf = async (fields: Record<string, unknown>) =>
      expectProblem(await askAs(platform, voiceId, fields), 422, 'validation_failed').errors;
    expect(await fieldsOf({ scopes: [] })).toEqual([{ field: 'body.scopes', message: expect.any(String) }]);
    expect(await fieldsOf({ scopes: ['radio'] })).toEqual([{ field: 'body.scopes.0', message: expect.any(String) }]);
    expect(await fieldsOf({ expires_at: inDays(-1) })).toEqual([{ field: 'body.expires_at', message: 'must be in the future' }]);
    expect(await fieldsOf({ license_token: 'vlt_mine' })).toEqual([{ field: 'body.license_token', message: 'unknown field' }]);
    expect(await fieldsOf({ message: 'x'.repeat(1001) })).toEqual([{ field: 'body.message', message: expect.any(String) }]);
    expect(await fieldsOf({ description: '' })).toEqual([{ field: 'body.description', message: expect.any(String) }]);
    expect(await fieldsOf({ description: 'x'.repeat(LICENSE_DESCRIPTION_MAX + 1) })).toEqual([
      { field: 'body.description', message: expect.any(String) },
    ]);
    expect(await fieldsOf({ description: undefined })).toEqual([{ field: 'body.description', message: expect.any(String) }]);
    expect(await fieldsOf({ represented_by: 'manager' })).toEqual([{ field: 'body.represented_by', message: expect.any(String) }]);
    expect(await fieldsOf({ expires_at: inDays(3700) })).toEqual([
      { field: 'body.expires_at', message: 'must be at most ten years ahead' },
    ]);
    // Nothing of the refused requests was stored.
    expect(await eventsOf(voiceId)).toHaveLength(0);
    expect(await auditOf(voiceId)).toHaveLength(0);
    const malformed = await origin.app.inject({
      method: 'POST',
      url: pathOf(requestLicenseRoute, { voice_id: voiceId }),
      headers: { 'x-api-key': platform.apiKey, 'content-type': 'application/json' },
      payload: '{"platform_name":',
    });
    expectProblem(malformed, 422, 'malformed_json');
    expectProblem(await askAs(platform, 'not-a-uuid'), 422, 'validation_failed');
  });

  it('refuses a request without a credential, with a wrong key, from an account, or naming another platform', async () => {
    const { owner, platform, voiceId } = await setup();
    const other = await platformKey(origin, 'Requester');
    const body = { platform_name: platform.name, scopes: ['audiobook'], expires_at: inDays(30), description: ASKED_USES };
    const url = pathOf(requestLicenseRoute, { voice_id: voiceId });
    expectProblem(await origin.app.inject({ method: 'POST', url, payload: body }), 401, 'authentication_required');
    expectProblem(
      await origin.app.inject({ method: 'POST', url, headers: { 'x-api-key': 'vip_wrong' }, payload: body }),
      401,
      'invalid_credentials',
    );
    expectProblem(await origin.app.inject({ method: 'POST', url, headers: bearer(owner.accessToken), payload: body }), 403, 'forbidden');
    const another = expectProblem(await askAs(other, voiceId, { platform_name: platform.name }), 403, 'platform_mismatch');
    expect(another.detail).toBe(
      `This API key belongs to another platform: send its own platform's name as platform_name ("${other.name}").`,
    );
    expectProblem(await askAs(platform, randomUUID()), 404, 'not_found');
  });

  it("says so when platform_name differs from the key's platform only in case, and which spelling to send", async () => {
    const { voiceId, platform } = await setup();
    const shouted = platform.name.toUpperCase();
    const problem = expectProblem(await askAs(platform, voiceId, { platform_name: shouted }), 403, 'platform_mismatch');
    expect(problem.detail).toBe(
      `platform_name "${shouted}" differs from this API key's platform only in case; names are matched exactly: send "${platform.name}".`,
    );
  });

  it("answers another owner's voice and another platform's request like missing ones", async () => {
    const { owner, platform, voiceId } = await setup();
    const stranger = await loggedIn(origin);
    const otherPlatform = await platformKey(origin, 'Requester');
    const created = await pendingRequest(platform, voiceId);
    const ofRequest = { voice_id: voiceId, request_id: created.request_id };
    expectProblem(await ownerCall(stranger, 'GET', pathOf(listLicenseRequestsRoute, { voice_id: voiceId })), 404, 'not_found');
    expectProblem(await ownerCall(stranger, 'POST', pathOf(approveLicenseRequestRoute, ofRequest), {}), 404, 'not_found');
    expectProblem(await ownerCall(stranger, 'POST', pathOf(declineLicenseRequestRoute, ofRequest), {}), 404, 'not_found');
    expectProblem(await readAs({ 'x-api-key': otherPlatform.apiKey }, created.request_id), 404, 'not_found');
    expectProblem(await readAs(bearer(owner.accessToken), created.request_id), 404, 'not_found');
    expectProblem(await readAs({}, created.request_id), 401, 'authentication_required');
    // A platform key cannot answer requests.
    const asPlatform = await origin.app.inject({
      method: 'POST',
      url: pathOf(approveLicenseRequestRoute, ofRequest),
      headers: { 'x-api-key': platform.apiKey },
      payload: {},
    });
    expectProblem(asPlatform, 401, 'authentication_required');
    // Nothing changed.
    const read = licenseRequestSchema.parse((await readAs({ 'x-api-key': platform.apiKey }, created.request_id)).json());
    expect(read.status).toBe('pending');
    const admin = await loggedIn(origin, 'admin');
    expect((await readAs(bearer(admin.accessToken), created.request_id)).statusCode).toBe(200);
  });

  it('refuses an approval whose terms are out of range, and changes nothing', async () => {
    const { owner, platform, voiceId } = await setup();
    const created = await pendingRequest(platform, voiceId);
    const url = pathOf(approveLicenseRequestRoute, { voice_id: voiceId, request_id: created.request_id });
    expectProblem(await ownerCall(owner, 'POST', url, { expires_at: inDays(-2) }), 422, 'validation_failed');
    expectProblem(await ownerCall(owner, 'POST', url, { scopes: ['music', 'music'] }), 422, 'validation_failed');
    expectProblem(await ownerCall(owner, 'POST', url, { platform_name: 'Other' }), 422, 'validation_failed');
    expect(await origin.database.db.select().from(licenses).where(eq(licenses.voiceId, voiceId))).toEqual([]);
    expect(
      await origin.database.db
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.eventType, 'license.granted'))),
    ).toEqual([]);
  });

  it('limits requests per key: past the limit 429 with Retry-After', async () => {
    const owner = await loggedIn(origin);
    const platform = await platformKey(origin, 'Requester');
    atStartOfRateWindow(origin);
    for (let call = 0; call < REQUESTS_PER_MINUTE; call++) {
      const voiceId = await insertTestVoice(origin.database.db, owner.userId, { consentStatus: 'active' });
      await pendingRequest(platform, voiceId);
    }
    const voiceId = await insertTestVoice(origin.database.db, owner.userId, { consentStatus: 'active' });
    const limited = await askAs(platform, voiceId);
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    origin.runtime.advance(Number(limited.headers['retry-after']) * 1000);
    await pendingRequest(platform, voiceId);
  });
});
