import { defineRoute } from '../../contract.js';
import { voiceParamsSchema } from '../../voices.js';

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
  problems: ['authentication_required', 'invalid_token', 'validation_failed', 'not_found'],
});
