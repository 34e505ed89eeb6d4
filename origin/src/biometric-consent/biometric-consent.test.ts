import { consentSchema, PROBLEM_CONTENT_TYPE, pathOf } from '@vip/shared-schema';
import { grantBiometricConsentRoute } from '@vip/shared-schema/routes/origin/biometric-consent';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { biometricConsents } from '../db/schema.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';

let origin: TestOrigin;
beforeAll(async () => {
  origin = await startTestOrigin();
});
afterAll(() => origin?.close());

const grant = (payload: object, token?: string) =>
  origin.app.inject({ method: 'POST', url: pathOf(grantBiometricConsentRoute), headers: token ? bearer(token) : {}, payload });

describe('POST /api/v1/consents', () => {
  it('records a biometric consent of the caller, not yet used by any voice', async () => {
    const owner = await loggedIn(origin);
    const response = await grant({ type: 'biometric', statement_version: 'v3', accepted: true }, owner.accessToken);
    expect(response.statusCode).toBe(201);
    const consent = consentSchema.parse(response.json());
    expect(consent).toMatchObject({ type: 'biometric', statement_version: 'v3' });
    expect(Date.parse(consent.granted_at)).toBeLessThanOrEqual(Date.now());
    const [row] = await origin.database.db.select().from(biometricConsents).where(eq(biometricConsents.id, consent.consent_id));
    expect(row).toMatchObject({ ownerId: owner.userId, voiceId: null });
  });

  it('refuses anything but accepted: true, other consent types and unknown fields with 422', async () => {
    const owner = await loggedIn(origin);
    for (const payload of [
      { type: 'biometric', statement_version: 'v3', accepted: false },
      { type: 'biometric', statement_version: 'v3', accepted: 'true' },
      { type: 'biometric', statement_version: 'v3' },
      { type: 'biometric', statement_version: '', accepted: true },
      { type: 'synthesis', statement_version: 'v3', accepted: true },
      { type: 'biometric', statement_version: 'v3', accepted: true, voice_id: null },
    ]) {
      const response = await grant(payload, owner.accessToken);
      expect(response.statusCode, JSON.stringify(payload)).toBe(422);
      expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
      expect(response.json().code).toBe('validation_failed');
    }
  });

  it('needs a Bearer token', async () => {
    const response = await grant({ type: 'biometric', statement_version: 'v3', accepted: true });
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('authentication_required');
  });
});
