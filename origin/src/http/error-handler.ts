import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { limits, PROBLEM_CONTENT_TYPE, ProblemError, REQUEST_ID_HEADER, toProblem } from '@vip/shared-schema';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { databaseFailure } from '../db/errors.js';
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
  // Node's parser takes a request target up to its header limit; past ours it is refused before any route.
  app.addHook('onRequest', async (request, reply) => {
    if (Buffer.byteLength(request.url) > limits.urlMaxBytes) {
      setRequestIdHeader(request, reply);
      throw new ProblemError('uri_too_long', `The request target is longer than ${limits.urlMaxBytes} bytes.`);
    }
  });

  app.setErrorHandler(async (error, request, reply) => {
    const problem = asProblem(error);
    const failure = databaseFailure(error);
    if (failure) request.log.warn({ err: error, reason: failure }, 'database unavailable');
    else if (problem.status >= 500) request.log.error({ err: error }, 'request failed');
    await readRestOfBody(request, reply);
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

/**
 * A handler that streams its body (a multipart upload) may refuse it part-way, with the rest still
 * unread and the stream no longer flowing: the next request on a keep-alive connection would then
 * wait behind it, or meet a reset. The rest is read and dropped first, up to one audio file's size;
 * past that the answer says `connection: close` rather than read on.
 */
async function readRestOfBody(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const body = request.raw;
  if (body.complete || body.destroyed || body.readableEnded) return;
  let unread = limits.audioMaxBytes;
  const drained = await new Promise<boolean>((resolve) => {
    const stop = (completed: boolean) => {
      body.off('data', count).off('end', ended).off('close', closed);
      resolve(completed);
    };
    const count = (chunk: Buffer) => {
      unread -= chunk.length;
      if (unread < 0) {
        body.pause();
        stop(false);
      }
    };
    const ended = () => stop(true);
    const closed = () => stop(body.complete);
    // The parser it was piped to has stopped taking it: unpiped, it flows into the counter alone.
    body.unpipe();
    body.on('data', count).once('end', ended).once('close', closed);
    body.resume();
  });
  if (!drained) reply.header('connection', 'close');
}

/** Node's parser errors (llhttp's codes, and Node's own for a request not received in time). */
const CLIENT_ERROR_PROBLEMS: Partial<Record<string, ProblemError>> = {
  HPE_HEADER_OVERFLOW: new ProblemError('headers_too_large', `The request line and headers exceed ${limits.headersMaxBytes} bytes.`),
  ERR_HTTP_REQUEST_TIMEOUT: new ProblemError('request_timeout', 'The request was not received in time.'),
};

/**
 * The answer to a request Node's parser refused (`clientError`), as the raw HTTP/1.1 bytes to end the
 * socket with: problem+json with a request id of its own (the request's was never read) and
 * `connection: close`, since the rest of what the client sent cannot be read as a request. Its
 * `instance` names the occurrence, not the target, which the parser did not hand over. Also what
 * `npm start -- --replicas`' front answers for its own parser (launch/origin-front.ts).
 */
export function clientErrorResponse(error: NodeJS.ErrnoException, requestId: string): { problem: ProblemError; raw: string } {
  const problem =
    CLIENT_ERROR_PROBLEMS[error.code ?? ''] ?? new ProblemError('malformed_request', 'The request is not well-formed HTTP/1.1.');
  const body = JSON.stringify(toProblem(problem, `urn:uuid:${requestId}`, requestId));
  const raw = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}`,
    `content-type: ${PROBLEM_CONTENT_TYPE}`,
    `content-length: ${Buffer.byteLength(body)}`,
    `${REQUEST_ID_HEADER}: ${requestId}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
  return { problem, raw };
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the request before Fastify saw it, so
 * no request, hook or reply exists; the answer is written to the socket (`clientErrorResponse`).
 * Logged like every other request, without the request.
 */
export function clientErrorAnswer(newId: () => string) {
  return function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const requestId = newId();
    const { problem, raw } = clientErrorResponse(error, requestId);
    this.log.info({ request_id: requestId, route: '(unparsed)', status: problem.status, parser_error: error.code }, 'request');
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(raw);
  };
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
