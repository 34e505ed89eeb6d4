import { BODY_PROBLEM_DETAILS, PROBLEM_CODES, type ProblemCode, ProblemError } from '@vip/shared-schema';
import { databaseFailure } from '../db/errors.js';
import { PATH_PARAMETER_MAX_LENGTH } from './routes.js';

/** Fastify's own failures, by error code, mapped onto the problem table. */
const FASTIFY_CODES: Record<string, ProblemCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_BAD_URL: 'route_not_found',
  FST_ERR_MAX_PARAM_LENGTH: 'validation_failed',
};

/** Fastify's messages quote the URL, which may hold anything; these say what went wrong without it, and what to send instead. */
const FASTIFY_DETAILS: Partial<Record<string, string>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: BODY_PROBLEM_DETAILS.malformedJson,
  FST_ERR_CTP_EMPTY_JSON_BODY: BODY_PROBLEM_DETAILS.emptyJson,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: BODY_PROBLEM_DETAILS.unsupportedMediaType,
  FST_ERR_MAX_PARAM_LENGTH: `A path parameter is longer than any route accepts (${PATH_PARAMETER_MAX_LENGTH} characters).`,
};

/** Other libraries only say a status; the first code in the table with that status stands for it. */
const codeForStatus = (status: number): ProblemCode | undefined =>
  (Object.keys(PROBLEM_CODES) as ProblemCode[]).find((code) => PROBLEM_CODES[code].status === status);

/** Anything thrown becomes a ProblemError; only ours carry their own detail text. */
export function asProblem(error: unknown): ProblemError {
  if (error instanceof ProblemError) return error;
  // The server went away (restart, failover) or did not answer in time (a held lock, a stalled server,
  // every connection busy): the request may simply be sent again. The detail names no internals.
  const failure = databaseFailure(error);
  if (failure) {
    const detail =
      failure === 'unreachable'
        ? 'The database is unavailable; try again shortly.'
        : 'The database did not answer in time; try again shortly.';
    return new ProblemError('unavailable', detail, { headers: { 'retry-after': '1' } });
  }
  const { code, statusCode } = (error ?? {}) as { code?: unknown; statusCode?: unknown };
  const known = typeof code === 'string' ? FASTIFY_CODES[code] : undefined;
  if (known) return new ProblemError(known, FASTIFY_DETAILS[code as string]);
  if (error instanceof SyntaxError && statusCode === 400) return new ProblemError('malformed_json', BODY_PROBLEM_DETAILS.malformedJson);
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return new ProblemError(codeForStatus(statusCode) ?? 'validation_failed');
  }
  return new ProblemError('internal_error', 'The server could not complete the request.');
}
