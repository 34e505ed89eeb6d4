import { API_KEY_PREFIX, ProblemError, sha256Hex } from '@vip/shared-schema';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Guards, Principal } from '../auth/guard.js';
import type { Database } from '../db/client.js';
import { platformOfKey } from './store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request came with a live platform API key instead of a user token. */
    platformName?: string;
    /** The id of that key (limits count per key). */
    apiKeyId?: string;
  }
}

const MAX_KEY_LENGTH = 256;

/**
 * For the origin routes a platform calls with the key it uses at the gate (the audit log, compare,
 * screening, licence requests, webhooks):
 * X-API-Key (without an Authorization header) sets `request.platformName`; otherwise a Bearer token
 * is required as everywhere else. Malformed, unknown and revoked keys are all the same 401.
 */
export function platformOrUserGuard(db: Database, guards: Guards): preHandlerAsyncHookHandler {
  return async function resolveCaller(this: unknown, request, reply) {
    const apiKey = request.headers['x-api-key'];
    if (typeof apiKey === 'string' && !request.headers.authorization) {
      const invalid = new ProblemError('invalid_credentials', 'The API key is not valid.');
      if (!apiKey.startsWith(API_KEY_PREFIX) || apiKey.length > MAX_KEY_LENGTH) throw invalid;
      const key = await platformOfKey(db, await sha256Hex(apiKey));
      if (!key) throw invalid;
      request.platformName = key.platformName;
      request.apiKeyId = key.keyId;
      return;
    }
    await guards.bearer.call(this as never, request, reply);
  };
}

export type Caller = { kind: 'platform'; platformName: string; keyId: string } | ({ kind: 'user' } & Principal);

/** Who passed platformOrUserGuard. */
export function callerOf(request: FastifyRequest): Caller {
  if (request.platformName !== undefined && request.apiKeyId !== undefined) {
    return { kind: 'platform', platformName: request.platformName, keyId: request.apiKeyId };
  }
  if (!request.principal) throw new ProblemError('authentication_required');
  return { kind: 'user', ...request.principal };
}

/** For the routes only a platform calls (a licence request): any other credential is 403, before the body is read. */
export function platformKeyGuard(db: Database, guards: Guards): preHandlerAsyncHookHandler {
  const resolveCaller = platformOrUserGuard(db, guards);
  return async function requirePlatformKey(this: unknown, request, reply) {
    await resolveCaller.call(this as never, request, reply);
    if (request.platformName === undefined) throw new ProblemError('forbidden', 'This route is for platform API keys.');
  };
}
