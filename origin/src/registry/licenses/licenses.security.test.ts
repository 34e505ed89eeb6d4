import { describe, expect, it } from 'vitest';
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
import { loggedIn } from '../../testing/origin.js';

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
