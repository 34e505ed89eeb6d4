import { PROBLEM_CONTENT_TYPE, ProblemError, toProblem } from '@vip/shared-schema';
import type { ErrorHandler, NotFoundHandler } from 'hono';
import type { AppEnv } from './context.js';

/** The one place an error becomes a response: RFC 9457 problem+json. */
export function problemResponse(error: ProblemError, instance: string, requestId: string): Response {
  const headers = new Headers(error.headers);
  headers.set('content-type', PROBLEM_CONTENT_TYPE);
  return new Response(JSON.stringify(toProblem(error, instance, requestId)), { status: error.status, headers });
}

export const onError: ErrorHandler<AppEnv> = (error, c) => {
  const requestId = c.get('requestId') ?? 'unknown';
  if (error instanceof ProblemError) return problemResponse(error, c.req.path, requestId);
  // The message may describe internals; the operator gets it in the log, the caller gets the id.
  console.error(JSON.stringify({ request_id: requestId, event: 'unhandled_error', error: error.name, message: error.message }));
  return problemResponse(new ProblemError('internal_error', 'Something went wrong; quote the request id.'), c.req.path, requestId);
};

/** `allowedMethods` says which methods a path has, so a wrong method gets 405 rather than 404. */
export const notFound =
  (allowedMethods: (path: string) => string[]): NotFoundHandler<AppEnv> =>
  (c) => {
    const allowed = allowedMethods(c.req.path);
    const error = allowed.length
      ? new ProblemError('method_not_allowed', `${c.req.method} is not allowed here.`, { headers: { allow: allowed.join(', ') } })
      : new ProblemError('route_not_found', `No route for ${c.req.method} ${c.req.path}.`);
    return problemResponse(error, c.req.path, c.get('requestId') ?? 'unknown');
  };
