import { pathOf } from '@vip/shared-schema';
import { enrollVoiceRoute, listVoicesRoute } from '@vip/shared-schema/routes/origin/voices';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { biometricConsents } from '../db/schema.js';
import { bearer, loggedIn } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import { enroll, eventsOf, grantBiometricConsent, inject, origin } from '../testing/voice-routes.js';
import { silentWav, speakerRecordings } from '../testing/voiceprint.js';

describe('POST /api/v1/voices/enroll', () => {
  it("answers unusable audio with the engine's 422 and reports enrollment.failed", async () => {
    const owner = await loggedIn(origin);
    const consentId = await grantBiometricConsent(owner);
    const corrupt = silentWav(1);
    new DataView(corrupt.buffer).setUint16(32, 3, true); // a block size that does not add up
    expectProblem(await enroll(owner, { audio: corrupt }, { name: 'Corrupt', consent_id: consentId }), 422, 'corrupt_audio');
    expectProblem(
      await enroll(owner, { audio: new Uint8Array(2048).fill(7) }, { name: 'Noise', consent_id: consentId }),
      422,
      'unsupported_format',
    );
    const silent = expectProblem(await enroll(owner, { audio: silentWav(3) }, { name: 'Silent', consent_id: consentId }), 422, 'no_speech');
    expect(silent.detail).toContain('0.0 s');
    const short = expectProblem(
      await enroll(owner, { audio: speakerRecordings('so762:SPEAKER9612', 0, 1) }, { name: 'Short', consent_id: consentId }),
      422,
      'too_short',
    );
    expect(short.detail).toMatch(/\d+\.\d s was detected/);

    const events = await eventsOf(owner.userId);
    expect(events.map((event) => [event.eventType, event.voiceId, (event.payload as { reason: string }).reason])).toEqual([
      ['enrollment.failed', null, 'corrupt_audio'],
      ['enrollment.failed', null, 'unsupported_format'],
      ['enrollment.failed', null, 'no_speech'],
      ['enrollment.failed', null, 'too_short'],
    ]);
    // The consent was not used up by the failures.
    const [consent] = await origin.database.db.select().from(biometricConsents).where(eq(biometricConsents.id, consentId));
    expect(consent!.voiceId).toBeNull();
  });

  it('refuses malformed forms with 422 and names the field', async () => {
    const owner = await loggedIn(origin);
    const consent_id = await grantBiometricConsent(owner);
    const audio = silentWav(1);
    const cases: Array<[Record<string, Uint8Array | Uint8Array[]>, Record<string, string>, string]> = [
      [{}, { name: 'No audio', consent_id }, 'body.audio'],
      [{ voice: audio }, { name: 'Wrong field', consent_id }, 'body.voice'],
      [{ audio }, { name: 'Extra', consent_id, colour: 'blue' }, 'body.colour'],
      [{ audio, name: audio }, { consent_id }, 'body.name'],
      [{ audio }, { name: '', consent_id }, 'body.name'],
      [{ audio }, { name: 'x'.repeat(101), consent_id }, 'body.name'],
      [{ audio }, { name: 'Bad consent', consent_id: 'not-a-uuid' }, 'body.consent_id'],
      [{ audio: Array.from({ length: 11 }, () => audio) }, { name: 'Too many', consent_id }, 'body.audio'],
    ];
    for (const [files, fields, field] of cases) {
      const problem = expectProblem(await enroll(owner, files, fields), 422, 'validation_failed');
      expect(problem.errors?.map((error) => error.field)).toContain(field);
    }
    // Text where the file belongs.
    const form = new FormData();
    form.append('audio', 'not a file');
    form.append('name', 'Text');
    form.append('consent_id', consent_id);
    const text = await inject({ method: 'POST', url: pathOf(enrollVoiceRoute), headers: bearer(owner.accessToken), payload: form });
    expect(expectProblem(text, 422, 'validation_failed').errors).toEqual([
      { field: 'body.audio', message: 'must be a file upload, not text' },
    ]);
  });

  it('refuses a file over 20 MB with 413 and a JSON body with 415', async () => {
    const owner = await loggedIn(origin);
    const consent_id = await grantBiometricConsent(owner);
    const huge = new Uint8Array(20 * 1024 * 1024 + 1);
    expectProblem(await enroll(owner, { audio: huge }, { name: 'Huge', consent_id }), 413, 'payload_too_large');
    const json = await inject({
      method: 'POST',
      url: pathOf(enrollVoiceRoute),
      headers: bearer(owner.accessToken),
      payload: { name: 'Json', consent_id },
    });
    expectProblem(json, 415, 'unsupported_media_type');
  });
});

describe('GET /api/v1/voices', () => {
  it('refuses a limit over 100 and a cursor it did not issue', async () => {
    const owner = await loggedIn(origin);
    const list = (query: string) =>
      inject({ method: 'GET', url: `${pathOf(listVoicesRoute)}${query}`, headers: bearer(owner.accessToken) });
    expectProblem(await list('?limit=101'), 422, 'validation_failed');
    expectProblem(await list('?limit=0'), 422, 'validation_failed');
    expectProblem(await list('?cursor=bm90LWEtY3Vyc29y'), 422, 'validation_failed');
  });
});
