import type { IncomingMessage } from 'node:http';
import { REQUEST_ID_HEADER, requestIdFrom } from '@vip/shared-schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const requestIdGenerator =
  (newId: () => string) =>
  (request: IncomingMessage): string => {
    const header = request.headers[REQUEST_ID_HEADER];
    return requestIdFrom(typeof header === 'string' ? header : undefined, newId);
  };

export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    setRequestIdHeader(request, reply);
  });
}

export function setRequestIdHeader(request: FastifyRequest, reply: FastifyReply): void {
  reply.header(REQUEST_ID_HEADER, request.id);
}
