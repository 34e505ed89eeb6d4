import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Header and body paths that must never reach a log line, whatever a future log call passes in. */
export const LOG_REDACTIONS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'body',
  'req.body',
  '*.password',
  '*.api_key',
  '*.access_token',
  '*.refresh_token',
  '*.token',
];

/** One line per request: id (bound by Fastify), method, route template, status, duration. No URL, no body, no headers. */
export function logEachRequest(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    logRequest(request, reply);
  });
}

export function logRequest(request: FastifyRequest, reply: FastifyReply): void {
  request.log.info(
    {
      method: request.method,
      route: request.routeOptions.url ?? '(unmatched)',
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    },
    'request',
  );
}
