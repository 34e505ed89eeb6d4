import { z } from 'zod';

/**
 * RFC 9457 problem details. Every error on both planes is one of these codes; the table fixes
 * the HTTP status and the title so that a code means the same thing everywhere.
 */
export const PROBLEM_CODES = {
  /** The HTTP layer's refusals, before any route (docs/CONTRACT.md#transport-errors). */
  malformed_request: { status: 400, title: 'Malformed HTTP request' },
  request_timeout: { status: 408, title: 'Request not received in time' },
  uri_too_long: { status: 414, title: 'URI too long' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  authentication_required: { status: 401, title: 'Authentication required' },
  invalid_credentials: { status: 401, title: 'Invalid credentials' },
  invalid_token: { status: 401, title: 'Invalid or expired token' },
  refresh_token_reused: { status: 401, title: 'Refresh token already used' },
  invalid_signature: { status: 401, title: 'Invalid request signature' },
  forbidden: { status: 403, title: 'Forbidden' },
  platform_mismatch: { status: 403, title: 'Platform not authorized' },
  consent_required: { status: 403, title: 'Biometric consent required' },
  consent_challenge_invalid: { status: 403, title: 'Consent challenge unknown, used or expired' },
  not_found: { status: 404, title: 'Not found' },
  route_not_found: { status: 404, title: 'No such route' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  email_taken: { status: 409, title: 'Email already registered' },
  identity_conflict: { status: 409, title: 'Voice already enrolled by another owner' },
  voice_under_review: { status: 409, title: 'Voice held for review' },
  token_already_used: { status: 409, title: 'Authorization token already used' },
  token_expired: { status: 410, title: 'Authorization token expired' },
  token_revoked: { status: 410, title: 'Authorization token revoked' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  validation_failed: { status: 422, title: 'Validation failed' },
  malformed_json: { status: 422, title: 'Malformed JSON body' },
  unsupported_format: { status: 422, title: 'Unsupported audio format' },
  corrupt_audio: { status: 422, title: 'Corrupt audio' },
  empty_audio: { status: 422, title: 'Empty audio' },
  too_long: { status: 422, title: 'Audio too long' },
  too_short: { status: 422, title: 'Audio too short' },
  no_speech: { status: 422, title: 'No speech detected' },
  model_mismatch: { status: 422, title: 'Embeddings of different models' },
  consent_statement_not_spoken: { status: 422, title: 'Consent statement not heard' },
  consent_phrase_not_spoken: { status: 422, title: 'Challenge phrase not heard' },
  consent_speaker_mismatch: { status: 422, title: 'Consent spoken by another voice' },
  consent_recording_synthetic: { status: 422, title: 'Consent recording is synthetic' },
  malformed_manifest: { status: 422, title: 'Malformed Content Credentials' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal error' },
  unavailable: { status: 503, title: 'Service unavailable' },
  receipt_pending: { status: 503, title: 'Receipt not yet available' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

/** What the voiceprint engine answers for an upload it cannot turn into a voiceprint. */
export const AUDIO_PROBLEM_CODES = [
  'unsupported_format',
  'corrupt_audio',
  'empty_audio',
  'too_long',
  'too_short',
  'no_speech',
  'payload_too_large',
] as const satisfies readonly ProblemCode[];

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** `type` URIs are stable URNs; the docs page of each plane lists them. */
export const problemTypeUri = (code: ProblemCode): string => `urn:vip:problem:${code}`;

export const fieldErrorSchema = z.object({ field: z.string(), message: z.string() });
export type FieldError = z.infer<typeof fieldErrorSchema>;

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string(),
    code: z.enum(Object.keys(PROBLEM_CODES) as [ProblemCode, ...ProblemCode[]]),
    request_id: z.string(),
    errors: z.array(fieldErrorSchema).optional(),
    heard: z
      .string()
      .optional()
      .describe('the words problems of a spoken consent only: everything the decoder heard in the recording, lower case'),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });
export type Problem = z.infer<typeof problemSchema>;

/** Thrown anywhere in either plane; each plane has exactly one handler that renders it. */
export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;
  /** What the speech decoder heard, on the spoken-consent words problems (`Problem.heard`). */
  readonly heard?: string;

  constructor(code: ProblemCode, detail?: string, extra?: { errors?: FieldError[]; headers?: Record<string, string>; heard?: string }) {
    super(detail ?? PROBLEM_CODES[code].title);
    this.name = 'ProblemError';
    this.code = code;
    this.status = PROBLEM_CODES[code].status;
    this.errors = extra?.errors;
    this.headers = extra?.headers;
    this.heard = extra?.heard;
  }
}

export function toProblem(error: ProblemError, instance: string, requestId: string): Problem {
  return {
    type: problemTypeUri(error.code),
    title: PROBLEM_CODES[error.code].title,
    status: error.status,
    detail: error.message,
    instance,
    code: error.code,
    request_id: requestId,
    ...(error.errors ? { errors: error.errors } : {}),
    ...(error.heard !== undefined ? { heard: error.heard } : {}),
  };
}

/**
 * Details both planes give for a body they cannot read, saying what to send instead: a newcomer's
 * first request is often the one with a stray comma or the wrong header.
 */
export const BODY_PROBLEM_DETAILS = {
  malformedJson:
    'The body is not valid JSON. Send one JSON object, with names and strings in double quotes and no trailing comma, e.g. {"name": "value"}; /docs shows each route\'s fields and an example.',
  emptyJson: 'The body is empty, yet Content-Type says JSON. Send a JSON object, or leave Content-Type out on a request without a body.',
  unsupportedMediaType:
    'Send the body as JSON, with the header Content-Type: application/json (the routes that take audio take multipart/form-data); /docs shows what each route takes.',
} as const;

/** How the part of a request that failed validation is named in the problem's detail. */
const REQUEST_PARTS = { body: 'The request body is invalid', query: 'The query string is invalid', params: 'A path parameter is invalid' };

/** Turns a zod failure into the 422 problem, one entry per offending field. */
export function validationProblem(issues: readonly z.core.$ZodIssue[], where: 'body' | 'query' | 'params'): ProblemError {
  const errors = issues.flatMap((issue): FieldError[] => {
    const base = [where, ...issue.path.map(String)].join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: `${base}.${key}`, message: 'unknown field' }));
    }
    return [{ field: base, message: issue.message }];
  });
  return new ProblemError('validation_failed', `${REQUEST_PARTS[where]}: \`errors\` names each field and what is wrong with it.`, {
    errors,
  });
}
