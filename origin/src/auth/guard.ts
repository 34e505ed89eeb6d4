import { ProblemError, type UserRole } from '@vip/shared-schema';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Clock } from '../runtime.js';
import type { AccessTokens } from './access-tokens.js';

export interface Principal {
  userId: string;
  role: UserRole;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export interface Guards {
  /** Any valid access token. */
  bearer: preHandlerAsyncHookHandler;
  /** A valid access token of an admin. */
  admin: preHandlerAsyncHookHandler[];
}

export function createGuards(tokens: AccessTokens, clock: Clock): Guards {
  const bearer: preHandlerAsyncHookHandler = async (request) => {
    const header = request.headers.authorization;
    if (!header) throw new ProblemError('authentication_required', 'Send Authorization: Bearer <access token>.');
    const match = /^Bearer ([A-Za-z0-9_.~+/=-]+)$/i.exec(header);
    if (!match) throw new ProblemError('invalid_token');
    const claims = await tokens.verify(match[1]!, clock.now());
    request.principal = { userId: claims.sub, role: claims.role };
  };
  const adminRole: preHandlerAsyncHookHandler = async (request) => {
    if (principalOf(request).role !== 'admin') throw new ProblemError('forbidden', 'This route is for administrators.');
  };
  return { bearer, admin: [bearer, adminRole] };
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new ProblemError('authentication_required');
  return request.principal;
}
