import { PROBLEM_CONTENT_TYPE, ProblemError, toProblem } from '@vip/shared-schema';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/errors.js';
import { logRequest } from './access-log.js';
import { renderProblemPage } from './problem-page.js';
import { asProblem } from './problems.js';
import { setRequestIdHeader } from './request-id.js';
import type { RouteTable } from './route-table.js';

/**
 * The one place errors become responses: everything thrown anywhere, Fastify's own failures and
 * unknown routes all leave as application/problem+json with a code and the request id.
 */
export function installErrorHandling(app: FastifyInstance, routes: RouteTable): void {
  app.setErrorHandler((error, request, reply) => {
    const problem = asProblem(error);
    if (isDatabaseUnavailable(error)) request.log.warn({ err: error }, 'database unavailable');
    else if (problem.status >= 500) request.log.error({ err: error }, 'request failed');
    sendProblem(request, reply, problem);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = pathOf(request);
    const allowed = routes.methodsAt(path);
    if (allowed.length > 0) {
      const detail = `${request.method} is not allowed here; use ${allowed.join(', ')}.`;
      sendProblem(request, reply, new ProblemError('method_not_allowed', detail, { headers: { allow: allowed.join(', ') } }));
      return;
    }
    sendProblem(request, reply, new ProblemError('route_not_found', `No route ${request.method} ${path}.`));
  });
}

/**
 * Fastify's `frameworkErrors`: the router refuses a malformed URL or an over-long path parameter
 * before any route (and so any hook) runs; those leave as problems too, with the request id and
 * the access log line the hooks give every other request.
 */
export function answerRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  setRequestIdHeader(request, reply);
  sendProblem(request, reply, asProblem(error));
  logRequest(request, reply);
}

function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: ProblemError): void {
  for (const [name, value] of Object.entries(problem.headers ?? {})) reply.header(name, value);
  const body = toProblem(problem, pathOf(request), request.id);
  if (wantsPage(request)) {
    reply.code(problem.status).type('text/html; charset=utf-8').send(renderProblemPage(body));
    return;
  }
  reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(body);
}

/**
 * A browser (it asks for text/html and not for JSON) on a route that serves a page, such as the
 * licensing page a gate answer links to: it gets the problem as a page. API clients, and every
 * JSON route, keep application/problem+json.
 */
function wantsPage(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  const htmlRoute = request.routeOptions.config?.htmlPage === true;
  return htmlRoute && /\btext\/html\b/.test(accept) && !/\bapplication\/(problem\+)?json\b/.test(accept);
}

/** The path without its query string: a query may hold something that has no place in a response. */
const pathOf = (request: FastifyRequest): string => request.url.split('?', 1)[0] ?? '/';
