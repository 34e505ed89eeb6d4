import { z } from 'zod';

/**
 * RFC 9457 problem details. Every error on both planes is one of these codes; the table fixes
 * the HTTP status and the title so that a code means the same thing everywhere.
 */
export const PROBLEM_CODES = {
  authentication_required: { status: 401, title: 'Authentication required' },
  invalid_credentials: { status: 401, title: 'Invalid credentials' },
  invalid_token: { status: 401, title: 'Invalid or expired token' },
  refresh_token_reused: { status: 401, title: 'Refresh token already used' },
  invalid_signature: { status: 401, title: 'Invalid request signature' },
  forbidden: { status: 403, title: 'Forbidden' },
  platform_mismatch: { status: 403, title: 'Platform not authorized' },
  consent_required: { status: 403, title: 'Biometric consent required' },
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
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });
export type Problem = z.infer<typeof problemSchema>;

/** Thrown anywhere in either plane; each plane has exactly one handler that renders it. */
export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;

  constructor(code: ProblemCode, detail?: string, extra?: { errors?: FieldError[]; headers?: Record<string, string> }) {
    super(detail ?? PROBLEM_CODES[code].title);
    this.name = 'ProblemError';
    this.code = code;
    this.status = PROBLEM_CODES[code].status;
    this.errors = extra?.errors;
    this.headers = extra?.headers;
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
  };
}

/** Turns a zod failure into the 422 problem, one entry per offending field. */
export function validationProblem(issues: readonly z.core.$ZodIssue[], where: 'body' | 'query' | 'params'): ProblemError {
  const errors = issues.flatMap((issue): FieldError[] => {
    const base = [where, ...issue.path.map(String)].join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: `${base}.${key}`, message: 'unknown field' }));
    }
    return [{ field: base, message: issue.message }];
  });
  return new ProblemError('validation_failed', `The request ${where} is invalid.`, { errors });
}
