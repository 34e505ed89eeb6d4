import { API_KEY_PREFIX, ProblemError, sha256Hex } from '@vip/shared-schema';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Guards, Principal } from '../auth/guard.js';
import type { Database } from '../db/client.js';
import { platformOfKey } from './store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request came with a live platform API key instead of a user token. */
    platformName?: string;
  }
}

const MAX_KEY_LENGTH = 256;

/**
 * For the origin routes a platform calls with the key it uses at the gate (the audit log, compare):
 * X-API-Key (without an Authorization header) sets `request.platformName`; otherwise a Bearer token
 * is required as everywhere else. Malformed, unknown and revoked keys are all the same 401.
 */
export function platformOrUserGuard(db: Database, guards: Guards): preHandlerAsyncHookHandler {
  return async function resolveCaller(this: unknown, request, reply) {
    const apiKey = request.headers['x-api-key'];
    if (typeof apiKey === 'string' && !request.headers.authorization) {
      const invalid = new ProblemError('invalid_credentials', 'The API key is not valid.');
      if (!apiKey.startsWith(API_KEY_PREFIX) || apiKey.length > MAX_KEY_LENGTH) throw invalid;
      const platformName = await platformOfKey(db, await sha256Hex(apiKey));
      if (!platformName) throw invalid;
      request.platformName = platformName;
      return;
    }
    await guards.bearer.call(this as never, request, reply);
  };
}

export type Caller = { kind: 'platform'; platformName: string } | ({ kind: 'user' } & Principal);

/** Who passed platformOrUserGuard. */
export function callerOf(request: FastifyRequest): Caller {
  if (request.platformName !== undefined) return { kind: 'platform', platformName: request.platformName };
  if (!request.principal) throw new ProblemError('authentication_required');
  return { kind: 'user', ...request.principal };
}
