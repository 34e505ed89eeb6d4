import {
  canonicalJson,
  LICENSE_TOKEN_PREFIX,
  licenseListSchema,
  licenseSchema,
  limits,
  pathOf,
  registeredPlatformNameSchema,
  sha256Hex,
} from '@vip/shared-schema';
import { createPlatformRoute } from '@vip/shared-schema/routes/origin/platforms';
import {
  checkPlatformNameRoute,
  listLicensesRoute,
  renewLicenseRoute,
  revokeLicenseRoute,
} from '@vip/shared-schema/routes/origin/registry/licenses';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { licenses } from '../../db/schema.js';
import {
  auditRecordsFor,
  call,
  createLicense,
  DAY_MS,
  eventsFor,
  inDays,
  newVoice,
  origin,
  otherPlatformName,
  owner,
  platformEventsFor,
  platformName,
  voiceRecords,
} from '../../testing/licenses.js';
import { loggedIn } from '../../testing/origin.js';
import { licenseExpiryRound } from './expiry.js';

describe('GET /api/v1/platform-names/{platform_name}', () => {
  it("answers a registered platform's exact name and nothing else, spaces included", async () => {
    for (const name of [platformName, otherPlatformName]) {
      const response = await call('GET', pathOf(checkPlatformNameRoute, { platform_name: name }));
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({ platform_name: name });
      registeredPlatformNameSchema.parse(response.json());
    }
  });

  it('answers a name of the longest length, its spaces percent-encoded (the router measures it decoded)', async () => {
    const admin = await loggedIn(origin, 'admin');
    const longest = 'Longest'.padEnd(limits.platformNameMaxLength, ' .');
    const created = await call('POST', pathOf(createPlatformRoute), { name: longest }, admin.accessToken);
    expect(created.statusCode, created.body).toBe(201);
    const response = await call('GET', pathOf(checkPlatformNameRoute, { platform_name: longest }));
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ platform_name: longest });
  });
});

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
          terms_sha256: licence.license_terms_sha256,
        },
      ],
    });
  });

  it('records the terms as stated and answers them with their hash, which anyone recomputes from the answer', async () => {
    const voiceId = await newVoice();
    const terms = {
      description: '  Narration of the audiobook "Harbour Lights" (English, unabridged), sold as audio download and streamed  ',
      represented_by: 'union',
      compensation: 'A session fee of 800 EUR and 12% of net receipts',
    };
    const licence = await createLicense(voiceId, terms);
    const shown = {
      description: terms.description.trim(),
      description_source: 'stated',
      represented_by: 'union',
      compensation: terms.compensation,
    };
    expect(licence).toMatchObject(shown);
    const { license_id, voice_id, platform_name, scopes, expires_at } = licence;
    const canonical = canonicalJson({ license_id, voice_id, platform_name, scopes, expires_at, ...shown });
    expect(licence.license_terms_sha256).toBe(await sha256Hex(canonical));

    const listed = licenseListSchema.parse((await call('GET', pathOf(listLicensesRoute, { voice_id: voiceId }))).json());
    expect(listed.licenses[0]).toMatchObject({ ...shown, license_terms_sha256: licence.license_terms_sha256 });
    expect(await auditRecordsFor(voiceId)).toEqual([
      expect.objectContaining({ reason: `license_created:${licence.license_id}`, license_terms_sha256: licence.license_terms_sha256 }),
    ]);
    const [row] = await origin.database.db.select().from(licenses).where(eq(licenses.id, licence.license_id));
    expect(row).toMatchObject({ description: shown.description, descriptionSource: 'stated', representedBy: 'union' });
  });

  it('records no representation as none, and no compensation as null', async () => {
    const licence = await createLicense(await newVoice());
    expect(licence).toMatchObject({ represented_by: 'none', compensation: null, description_source: 'stated' });
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
    const response = await call('GET', pathOf(listLicensesRoute, { voice_id: voiceId }));
    expect(response.statusCode).toBe(200);
    const { licenses: listed } = licenseListSchema.parse(response.json());
    expect(listed.map((licence) => licence.license_id)).toEqual([first.license_id, second.license_id]);
    expect(response.body).not.toContain(LICENSE_TOKEN_PREFIX);
    expect(response.body).not.toContain(await sha256Hex(first.license_token));
  });
});

describe('renew and revoke', () => {
  it('renews a licence: new expiry, same token, license.renewed event, index republished', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    const newExpiry = inDays(90);
    const response = await call('POST', pathOf(renewLicenseRoute, { voice_id: voiceId, license_id: licence.license_id }), {
      expires_at: newExpiry,
    });
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

  it('keeps the terms on a renewal without them, replaces all three with new ones, and audits each with its hash', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId, { represented_by: 'counsel', compensation: 'A flat fee of 500 EUR' });
    const renew = async (body: Record<string, unknown>) => {
      const response = await call('POST', pathOf(renewLicenseRoute, { voice_id: voiceId, license_id: licence.license_id }), body);
      expect(response.statusCode, response.body).toBe(200);
      return licenseSchema.parse(response.json());
    };
    const kept = await renew({ expires_at: inDays(60) });
    expect(kept).toMatchObject({ description: licence.description, represented_by: 'counsel', compensation: 'A flat fee of 500 EUR' });
    // The expiry is a term: a renewal changes the hash even when the words stay.
    expect(kept.license_terms_sha256).not.toBe(licence.license_terms_sha256);

    const replaced = await renew({ expires_at: inDays(90), description: 'Narration of podcast episode intros only' });
    expect(replaced).toMatchObject({
      description: 'Narration of podcast episode intros only',
      description_source: 'stated',
      represented_by: 'none',
      compensation: null,
    });
    const changes = (await auditRecordsFor(voiceId)).map(({ reason, license_terms_sha256 }) => ({ reason, license_terms_sha256 }));
    expect(changes).toEqual(
      expect.arrayContaining([
        { reason: `license_created:${licence.license_id}`, license_terms_sha256: licence.license_terms_sha256 },
        { reason: `license_renewed:${licence.license_id}`, license_terms_sha256: kept.license_terms_sha256 },
        { reason: `license_renewed_with_new_terms:${licence.license_id}`, license_terms_sha256: replaced.license_terms_sha256 },
      ]),
    );
    const records = await voiceRecords(voiceId);
    expect(records.at(-1)!.record!.licenses[0]!.terms_sha256).toBe(replaced.license_terms_sha256);
  });

  it('revokes a licence: license.revoked event, dropped from the index; a second revoke changes nothing', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    const url = pathOf(revokeLicenseRoute, { voice_id: voiceId, license_id: licence.license_id });
    const response = await call('POST', url);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ license_id: licence.license_id, status: 'revoked' });
    const again = await call('POST', url);
    expect(again.json()).toEqual({ license_id: licence.license_id, status: 'revoked' });

    expect((await eventsFor(voiceId)).map((event) => event.eventType)).toEqual(['license.revoked']);
    const records = await voiceRecords(voiceId);
    expect(records).toHaveLength(2);
    expect(records[1]!.record!.licenses).toEqual([]);
    const listed = licenseListSchema.parse((await call('GET', pathOf(listLicensesRoute, { voice_id: voiceId }))).json());
    expect(listed.licenses[0]).toMatchObject({ status: 'revoked', revoked_at: expect.any(String) });
    expect((await auditRecordsFor(voiceId)).map((record) => record.reason).sort()).toEqual(
      [`license_created:${licence.license_id}`, `license_revoked:${licence.license_id}`].sort(),
    );
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
    const listed = licenseListSchema.parse((await call('GET', pathOf(listLicensesRoute, { voice_id: voiceId }))).json());
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
    const response = await call('POST', pathOf(renewLicenseRoute, { voice_id: voiceId, license_id: licence.license_id }), {
      expires_at: inDays(30),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().status).toBe('active');
    expect((await eventsFor(voiceId)).map((event) => event.eventType)).toEqual(['license.expired', 'license.renewed']);
  });
});
