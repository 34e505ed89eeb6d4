import { defineRoute } from '../../contract.js';
import { limits } from '../../limits.js';
import { screeningResultSchema } from '../../screening.js';
import { AUDIO_FORMATS, audioProblems } from './voices.js';

/** Served by origin/src/screening/: which protected voices a recording is. */

export const screenSampleRoute = defineRoute({
  method: 'post',
  path: '/api/v1/protect/screen',
  operationId: 'screenSample',
  summary:
    "Find which protected voices a recording is (1:N over the enrolled voices): up to 5 above the model's calibrated sample-vs-enrolled search point, best first, each with its licensing page; the owners of voices the platform holds no live licence for are told (`voice.detected`). The recording is not kept",
  tag: 'detection',
  auth: ['apiKey', 'bearer'],
  multipart: {
    audio: {
      description: `the recording to screen (${AUDIO_FORMATS}), or up to ${limits.screenMaxFiles} recordings of the same speaker, screened together as one sample; 10 s of speech or more finds a protected voice far more often than 3 s`,
      file: true,
      multiple: true,
      required: true,
    },
    platform_name: {
      description: "the caller's platform, exactly as its API key is registered (an administrator names any)",
      required: true,
    },
  },
  success: { status: 200, description: 'Screening result', schema: screeningResultSchema },
  problems: ['forbidden', 'platform_mismatch', ...audioProblems, 'rate_limited'],
});
