import { LICENSE_COMPENSATION_MAX, LICENSE_DESCRIPTION_MAX, limits, PROBLEM_CONTENT_TYPE, pathOf } from '@vip/shared-schema';
import {
  checkPlatformNameRoute,
  createLicenseRoute,
  renewLicenseRoute,
  revokeLicenseRoute,
} from '@vip/shared-schema/routes/origin/registry/licenses';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { licenses } from '../../db/schema.js';
import {
  auditRecordsFor,
  call,
  createLicense,
  eventsFor,
  inDays,
  newVoice,
  origin,
  platformName,
  voiceRecords,
} from '../../testing/licenses.js';

describe('checking a platform name', () => {
  const check = (name: string, token?: string) => call('GET', pathOf(checkPlatformNameRoute, { platform_name: name }), undefined, token);

  it('answers 404 for a name no platform has, the same name in other case included (the gate matches exactly)', async () => {
    for (const name of ['Nobody Registered', platformName.toUpperCase(), `${platformName} `]) {
      const response = await check(name);
      expect(response.statusCode, name).toBe(404);
      expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
      expect(response.json().code).toBe('not_found');
    }
  });

  it('refuses a name no platform could have with 422, and a caller without a token with 401', async () => {
    const nonAscii = 'é'.repeat(limits.platformNameMaxLength);
    for (const name of ['!bad', ' Narrator.io', nonAscii, `${nonAscii}é`]) {
      const response = await check(name);
      expect(response.statusCode, name).toBe(422);
      expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
      expect(response.json().code).toBe('validation_failed');
    }
    const anonymous = await origin.app.inject({ method: 'GET', url: pathOf(checkPlatformNameRoute, { platform_name: platformName }) });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().code).toBe('authentication_required');
  });
});

describe('licence validation', () => {
  const attempt = async (fields: Record<string, unknown>) => {
    const voiceId = await newVoice();
    const response = await call('POST', pathOf(createLicenseRoute, { voice_id: voiceId }), {
      platform_name: platformName,
      scopes: ['audiobook'],
      expires_at: inDays(30),
      description: 'Narration of the audiobook series "Harbour Lights", volumes 1 to 3',
      ...fields,
    });
    expect(response.statusCode).toBe(422);
    expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
    expect(await voiceRecords(voiceId)).toHaveLength(0);
    expect(await origin.database.db.select().from(licenses).where(eq(licenses.voiceId, voiceId))).toHaveLength(0);
    expect(await auditRecordsFor(voiceId)).toHaveLength(0);
    return response.json().errors as { field: string; message: string }[];
  };

  it('refuses a missing, empty, blank or oversized description of the intended uses', async () => {
    const descriptionRefused = [{ field: 'body.description', message: expect.any(String) }];
    expect(await attempt({ description: undefined })).toEqual(descriptionRefused);
    expect(await attempt({ description: '' })).toEqual(descriptionRefused);
    expect(await attempt({ description: '  \n ' })).toEqual(descriptionRefused);
    expect(await attempt({ description: 'x'.repeat(LICENSE_DESCRIPTION_MAX + 1) })).toEqual(descriptionRefused);
  });

  it('refuses a representation it does not know, and an empty or oversized compensation', async () => {
    expect(await attempt({ represented_by: 'agent' })).toEqual([{ field: 'body.represented_by', message: expect.any(String) }]);
    expect(await attempt({ represented_by: null })).toEqual([{ field: 'body.represented_by', message: expect.any(String) }]);
    expect(await attempt({ compensation: '' })).toEqual([{ field: 'body.compensation', message: expect.any(String) }]);
    expect(await attempt({ compensation: 'x'.repeat(LICENSE_COMPENSATION_MAX + 1) })).toEqual([
      { field: 'body.compensation', message: expect.any(String) },
    ]);
  });

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

describe('renew and revoke: refusals', () => {
  it('refuses to renew a revoked licence with 409', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    await call('POST', pathOf(revokeLicenseRoute, { voice_id: voiceId, license_id: licence.license_id }));
    const response = await call('POST', pathOf(renewLicenseRoute, { voice_id: voiceId, license_id: licence.license_id }), {
      expires_at: inDays(10),
    });
    expect(response.statusCode).toBe(409);
    expect(response.json().code).toBe('conflict');
  });

  it('refuses new terms without a description, or with an empty one, and changes nothing', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    const renew = (body: Record<string, unknown>) =>
      call('POST', pathOf(renewLicenseRoute, { voice_id: voiceId, license_id: licence.license_id }), { expires_at: inDays(60), ...body });
    for (const body of [
      { represented_by: 'union' },
      { compensation: 'A flat fee' },
      { description: '' },
      { description: 'Ads', represented_by: 'guild' },
    ]) {
      const response = await renew(body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
      expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
      expect(response.json().errors.map((error: { field: string }) => error.field)).toEqual([
        'represented_by' in body && 'description' in body ? 'body.represented_by' : 'body.description',
      ]);
    }
    const [row] = await origin.database.db.select().from(licenses).where(eq(licenses.id, licence.license_id));
    expect(row).toMatchObject({ description: licence.description, expiresAt: new Date(licence.expires_at) });
    expect(await voiceRecords(voiceId)).toHaveLength(1);
  });

  it('refuses a renewal into the past with 422', async () => {
    const voiceId = await newVoice();
    const licence = await createLicense(voiceId);
    const response = await call('POST', pathOf(renewLicenseRoute, { voice_id: voiceId, license_id: licence.license_id }), {
      expires_at: inDays(-2),
    });
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
    const response = await call('POST', pathOf(revokeLicenseRoute, { voice_id: voiceId, license_id: licence.license_id }));
    expect(response.statusCode).toBe(500);

    const [row] = await db.select().from(licenses).where(eq(licenses.id, licence.license_id));
    expect(row!.status).toBe('active');
    expect(await voiceRecords(voiceId)).toHaveLength(1);
    expect(await auditRecordsFor(voiceId)).toHaveLength(1);
    expect(await eventsFor(voiceId)).toHaveLength(0);
  });
});
