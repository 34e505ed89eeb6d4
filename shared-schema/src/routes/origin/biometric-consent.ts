import { consentSchema, grantConsentRequestSchema } from '../../biometric-consent.js';
import { defineRoute } from '../../contract.js';

/**
 * Served by origin/src/biometric-consent/: the owner's consent to enroll a voice print, which an
 * enrollment uses up (not the synthesis consent the gate judges by: registry/synthesis-consent.ts).
 */

export const grantBiometricConsentRoute = defineRoute({
  method: 'post',
  path: '/api/v1/consents',
  operationId: 'grantConsent',
  summary: "Record the caller's biometric consent; an enrollment needs one, and each consent serves one voice",
  tag: 'voices',
  auth: ['bearer'],
  body: grantConsentRequestSchema,
  success: { status: 201, description: 'Consent recorded', schema: consentSchema },
  problems: ['validation_failed', 'malformed_json'],
});
