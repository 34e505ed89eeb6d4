import { defineRoute } from '../../contract.js';
import { comparisonResultSchema } from '../../detection.js';
import { AUDIO_FORMATS, audioProblems } from './voices.js';

/** Served by origin/src/detection/: comparing two recordings, or one with an enrolled voice. */

export const compareVoicesRoute = defineRoute({
  method: 'post',
  path: '/api/v1/detection/compare',
  operationId: 'compareVoices',
  summary:
    "Compare two recordings, or (owners) one recording with one of the caller's enrolled voices; only embedding hashes are returned. In Variant B a platform's comparison that matches an enrolled voice notifies its owner (`voice.detected`)",
  tag: 'detection',
  auth: ['bearer', 'apiKey'],
  multipart: {
    audio1: { description: `the first recording (${AUDIO_FORMATS})`, file: true, required: true },
    audio2: { description: 'the second recording; give this or voice_id', file: true },
    voice_id: { description: "one of the caller's enrolled voices, in place of audio2" },
  },
  success: { status: 200, description: 'Comparison result', schema: comparisonResultSchema },
  problems: [...audioProblems, 'not_found', 'model_mismatch'],
});
