import { pathOf } from '@vip/shared-schema';
import {
  createLicenseRoute,
  listLicensesRoute,
  renewLicenseRoute,
  revokeLicenseRoute,
} from '@vip/shared-schema/routes/origin/registry/licenses';
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
    const ofLicence = { voice_id: voiceId, license_id: licence.license_id };
    const attempts = [
      call(
        'POST',
        pathOf(createLicenseRoute, { voice_id: voiceId }),
        { platform_name: platformName, scopes: ['music'], expires_at: inDays(5), description: 'Theme song vocals' },
        stranger.accessToken,
      ),
      call('GET', pathOf(listLicensesRoute, { voice_id: voiceId }), undefined, stranger.accessToken),
      call('POST', pathOf(renewLicenseRoute, ofLicence), { expires_at: inDays(60) }, stranger.accessToken),
      call('POST', pathOf(revokeLicenseRoute, ofLicence), undefined, stranger.accessToken),
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
    const response = await call('POST', pathOf(revokeLicenseRoute, { voice_id: b, license_id: licence.license_id }));
    expect(response.statusCode).toBe(404);
  });

  it('leaves no event, audit record or index update behind for a licence on an unknown voice', async () => {
    const voiceId = crypto.randomUUID();
    const response = await call('POST', pathOf(createLicenseRoute, { voice_id: voiceId }), {
      platform_name: platformName,
      scopes: ['music'],
      expires_at: inDays(5),
      description: 'Theme song vocals',
    });
    expect(response.statusCode).toBe(404);
    expect(await voiceRecords(voiceId)).toHaveLength(0);
    expect(await eventsFor(voiceId)).toHaveLength(0);
    expect(await auditRecordsFor(voiceId)).toHaveLength(0);
  });
});
