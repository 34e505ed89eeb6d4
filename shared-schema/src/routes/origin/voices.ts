import { defineRoute } from '../../contract.js';
import { limits } from '../../limits.js';
import { AUDIO_PROBLEM_CODES } from '../../problem.js';
import {
  decideVoiceReviewRequestSchema,
  deletedVoiceSchema,
  enrolledVoiceSchema,
  listVoiceDisputesQuerySchema,
  listVoiceReviewsQuerySchema,
  listVoicesQuerySchema,
  recordingMeasurementsSchema,
  voiceDisputeListSchema,
  voiceDisputeSchema,
  voiceListSchema,
  voiceParamsSchema,
  voiceReviewListSchema,
  voiceReviewOutcomeSchema,
} from '../../voices.js';
import { spokenConsentProblems } from './spoken-consent.js';

/** Served by origin/src/voices/ (docs/CONTRACT.md#answers-to-the-specifications-gaps, docs/CONTRACT.md#contract-details): enrollment, the voice list, erasure, disputes and the administrator's review of held voices. */

/** What the engine answers for a file it cannot use, and when its queue is full: every route that takes recordings. */
export const audioProblems = [...AUDIO_PROBLEM_CODES, 'unsupported_media_type', 'validation_failed', 'unavailable'] as const;

/** The formats every route that takes recordings reads. */
export const AUDIO_FORMATS = 'WAV, FLAC, MP3, Ogg Opus/Vorbis, WebM/Opus or MP4/M4A';

/** The spoken consent an enrollment and a re-enrollment carry (docs/DECISIONS.md#spoken-consent). */
const spokenConsentFields = {
  spoken_consent: {
    description: `the owner reading the consent statement, then the phrase, of a challenge (POST /api/v1/consents/challenges) in the voice being enrolled; at most ${limits.spokenConsentMaxSeconds} s. Required unless the origin runs with SPOKEN_CONSENT=when_given (docs/OPERATIONS.md#spoken-consent)`,
    file: true,
    required: false,
  },
  challenge_id: { description: 'the challenge the spoken_consent recording reads; single use', required: false },
} as const;

export const enrollVoiceRoute = defineRoute({
  method: 'post',
  path: '/api/v1/voices/enroll',
  operationId: 'enrollVoice',
  summary: `Enroll a voice from one or more recordings (${AUDIO_FORMATS}); needs ${limits.enrollMinSpeechSeconds} s of speech in total`,
  tag: 'voices',
  auth: ['bearer'],
  multipart: {
    audio: {
      description: `one to ${limits.enrollMaxFiles} recordings of the same speaker, each at most ${limits.audioMaxBytes / 1024 / 1024} MB and ${limits.audioMaxSeconds / 60} min`,
      file: true,
      multiple: true,
      required: true,
    },
    name: { description: 'display name, 1 to 100 characters', required: true },
    consent_id: { description: 'an unused biometric consent of the caller (POST /api/v1/consents)', required: true },
    ...spokenConsentFields,
  },
  success: {
    status: 201,
    description:
      "Voice enrolled: `status` `ready`, or `pending_review` when it resembles another owner's voice enough to need an administrator",
    schema: enrolledVoiceSchema,
  },
  problems: [...audioProblems, 'consent_required', ...spokenConsentProblems, 'identity_conflict'],
});

export const measureRecordingsRoute = defineRoute({
  method: 'post',
  path: '/api/v1/voices/measure',
  operationId: 'measureRecordings',
  summary: `Measure recordings (${AUDIO_FORMATS}) as enrollment measures them: speech seconds and quality per file. Nothing is stored; the console asks it after each take`,
  tag: 'voices',
  auth: ['bearer'],
  multipart: {
    audio: {
      description: `one to ${limits.enrollMaxFiles} recordings, each at most ${limits.audioMaxBytes / 1024 / 1024} MB and ${limits.audioMaxSeconds / 60} min`,
      file: true,
      multiple: true,
      required: true,
    },
  },
  success: { status: 200, description: 'Each recording measured, in upload order', schema: recordingMeasurementsSchema },
  problems: [...audioProblems],
});

export const reenrollVoiceRoute = defineRoute({
  method: 'post',
  path: '/api/v1/voices/{voice_id}/re-enroll',
  operationId: 'reenrollVoice',
  summary: `Replace a voice's voiceprint with one made by the model the service runs now, from new recordings (${AUDIO_FORMATS}); the voice keeps its id, biometric consent, synthesis consent and licences. A voice enrolled under an earlier model (\`voiceprint_current\` false) is found by no 1:N search until it is re-enrolled`,
  tag: 'voices',
  auth: ['bearer'],
  params: voiceParamsSchema,
  multipart: {
    audio: {
      description: `one to ${limits.enrollMaxFiles} recordings of the voice's speaker, as for an enrollment`,
      file: true,
      multiple: true,
      required: true,
    },
    ...spokenConsentFields,
  },
  success: {
    status: 200,
    description:
      "Voiceprint replaced: `status` `ready`, or `pending_review` (granting nothing until an administrator clears it) when it resembles another owner's voice enough to need one",
    schema: enrolledVoiceSchema,
  },
  problems: [...audioProblems, 'not_found', 'voice_under_review', ...spokenConsentProblems, 'identity_conflict'],
});

export const listVoicesRoute = defineRoute({
  method: 'get',
  path: '/api/v1/voices',
  operationId: 'listVoices',
  summary: "List the caller's voices, newest first",
  tag: 'voices',
  auth: ['bearer'],
  query: listVoicesQuerySchema,
  success: { status: 200, description: 'One page of voices', schema: voiceListSchema },
  problems: ['validation_failed'],
});

export const deleteVoiceRoute = defineRoute({
  method: 'delete',
  path: '/api/v1/voices/{voice_id}',
  operationId: 'deleteVoice',
  summary: 'Erase a voice: its voiceprint, licences, biometric consent and edge index record; audit entries stay',
  tag: 'voices',
  auth: ['bearer'],
  params: voiceParamsSchema,
  success: { status: 200, description: 'Erasure receipt', schema: deletedVoiceSchema },
  problems: ['validation_failed', 'not_found'],
});

/** How a person whose voice another account enrolled gets it back (docs/DECISIONS.md#voice-disputes). */
export const openVoiceDisputeRoute = defineRoute({
  method: 'post',
  path: '/api/v1/voices/disputes',
  operationId: 'openVoiceDispute',
  summary: `Dispute a voice another owner enrolled, as the person it belongs to: your recordings (${AUDIO_FORMATS}) and the spoken consent of a challenge, read in that voice and checked as an enrollment's. The voice is held for an administrator, who clears it, erases it or transfers it to you; its owner is told`,
  tag: 'voices',
  auth: ['bearer'],
  multipart: {
    audio: {
      description: `one to ${limits.enrollMaxFiles} recordings of your voice, as for an enrollment (those that answered 409 identity_conflict serve)`,
      file: true,
      multiple: true,
      required: true,
    },
    name: { description: 'the name of your voice if it is transferred to you, 1 to 100 characters', required: true },
    consent_id: { description: 'an unused biometric consent of yours, attached to your voice if it is transferred to you', required: true },
    spoken_consent: {
      description: `you reading the consent statement, then the phrase, of a challenge (POST /api/v1/consents/challenges); at most ${limits.spokenConsentMaxSeconds} s. Always required`,
      file: true,
      required: true,
    },
    challenge_id: { description: 'the challenge the spoken_consent recording reads; single use', required: true },
  },
  success: {
    status: 201,
    description: 'Dispute opened: the voice it names is held, granting nothing, until an administrator decides',
    schema: voiceDisputeSchema,
  },
  problems: [...audioProblems, 'consent_required', ...spokenConsentProblems, 'not_found', 'voice_under_review'],
});

export const listVoiceDisputesRoute = defineRoute({
  method: 'get',
  path: '/api/v1/voices/disputes',
  operationId: 'listVoiceDisputes',
  summary: "List the caller's disputes, newest first, with where each stands",
  tag: 'voices',
  auth: ['bearer'],
  query: listVoiceDisputesQuerySchema,
  success: { status: 200, description: 'One page of disputes', schema: voiceDisputeListSchema },
  problems: ['validation_failed'],
});

/** Admin-only: another caller answers 403 before anything about the voice is looked up. */
const adminProblems = ['forbidden', 'validation_failed'] as const;

export const listVoiceReviewsRoute = defineRoute({
  method: 'get',
  path: '/api/v1/admin/voice-reviews',
  operationId: 'listVoiceReviews',
  summary: 'List the voices held for review, oldest first (admin)',
  tag: 'voices',
  auth: ['bearer'],
  query: listVoiceReviewsQuerySchema,
  success: { status: 200, description: 'One page of held voices', schema: voiceReviewListSchema },
  problems: adminProblems,
});

export const decideVoiceReviewRoute = defineRoute({
  method: 'post',
  path: '/api/v1/admin/voice-reviews/{voice_id}',
  operationId: 'decideVoiceReview',
  summary:
    "Clear a held voice (it becomes `ready`), reject it (erased as DELETE erases it) or, when it is disputed, transfer it (erased, and the claimant's voiceprint enrolled as their voice); both sides are told (admin). A voice not held, or `transfer` of a voice not disputed, answers 409",
  tag: 'voices',
  auth: ['bearer'],
  params: voiceParamsSchema,
  body: decideVoiceReviewRequestSchema,
  success: { status: 200, description: 'The voice after the decision', schema: voiceReviewOutcomeSchema },
  problems: [...adminProblems, 'malformed_json', 'not_found', 'conflict'],
});
