import { defineRoute } from '../../contract.js';
import { limits } from '../../limits.js';
import { consentChallengeSchema } from '../../spoken-consent.js';
import { voiceParamsSchema } from '../../voices.js';

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
  'consent_recording_synthetic',
  // The recording's structure is scanned for Content Credentials: an ambiguous manifest store is refused as it is at verify.
  'malformed_manifest',
] as const;

export const createSpokenConsentChallengeRoute = defineRoute({
  method: 'post',
  path: '/api/v1/consents/challenges',
  operationId: 'createConsentChallenge',
  summary: `A spoken-consent challenge: the statement and a random phrase to read aloud, in the voice being enrolled, into the \`spoken_consent\` recording of the next enrollment or re-enrollment; single use, valid ${limits.consentChallengeTtlSeconds / 60} min`,
  tag: 'voices',
  auth: ['bearer'],
  success: { status: 201, description: 'Challenge issued', schema: consentChallengeSchema },
  problems: ['rate_limited'],
});

/** The owner's download of the recording a voice's spoken consent was verified on (docs/DECISIONS.md#spoken-consent). */
export const spokenConsentRecordingRoute = defineRoute({
  method: 'get',
  path: '/api/v1/voices/{voice_id}/spoken-consent',
  operationId: 'downloadSpokenConsentRecording',
  summary:
    "The recording of the voice's spoken consent, as uploaded (the owner only; its SHA-256 is the consent record's `recording_sha256`). 404 for a voice enrolled without one",
  tag: 'voices',
  auth: ['bearer'],
  params: voiceParamsSchema,
  success: { status: 200, description: 'The recording, byte for byte as uploaded', contentType: 'application/octet-stream' },
  problems: ['validation_failed', 'not_found'],
});
