import { defineRoute } from '../../contract.js';
import { limits } from '../../limits.js';
import { consentChallengeSchema } from '../../spoken-consent.js';

/**
 * Served by origin/src/spoken-consent/: the challenge an owner reads aloud, in the voice being
 * enrolled, as the spoken form of the biometric consent (biometric-consent.ts).
 */

/** Each check of a spoken consent has its own answer, so a client can say which one failed. */
export const spokenConsentProblems = [
  'consent_challenge_invalid',
  'consent_statement_not_spoken',
  'consent_phrase_not_spoken',
  'consent_speaker_mismatch',
] as const;

export const createSpokenConsentChallengeRoute = defineRoute({
  method: 'post',
  path: '/api/v1/consents/challenges',
  operationId: 'createConsentChallenge',
  summary: `A spoken-consent challenge: the statement and a random phrase to read aloud, in the voice being enrolled, into the \`spoken_consent\` recording of the next enrollment or re-enrollment; single use, valid ${limits.consentChallengeTtlSeconds / 60} min`,
  tag: 'voices',
  auth: ['bearer'],
  success: { status: 201, description: 'Challenge issued', schema: consentChallengeSchema },
  problems: ['authentication_required', 'invalid_token'],
});
