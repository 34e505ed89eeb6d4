import { defineRoute } from '../../../contract.js';
import { registryVoiceParamsSchema } from '../../../licenses.js';
import { setConsentRequestSchema, voiceConsentSchema } from '../../../synthesis-consent.js';

/**
 * Served by origin/src/registry/synthesis-consent/: the owner's synthesis consent, which the edge gate
 * judges by (not the biometric consent an enrollment needs: biometric-consent.ts).
 */

/** Another owner's voice answers 404 like a missing one, so voice ids cannot be probed. */
const ownerProblems = ['validation_failed', 'not_found'] as const;

export const setSynthesisConsentRoute = defineRoute({
  method: 'put',
  path: '/api/v1/voices/{voice_id}/consent',
  operationId: 'setVoiceConsent',
  summary: "Grant or withdraw synthesis consent for one of the caller's voices; the edge gate follows within a second",
  tag: 'licenses',
  auth: ['bearer'],
  params: registryVoiceParamsSchema,
  body: setConsentRequestSchema,
  success: { status: 200, description: 'Consent state now', schema: voiceConsentSchema },
  /** `voice_under_review`: consent cannot be granted to a voice held for review (withdrawing always works). */
  problems: [...ownerProblems, 'malformed_json', 'voice_under_review'],
});
