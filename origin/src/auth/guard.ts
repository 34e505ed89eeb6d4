import { API_KEY_PREFIX, type AuditActor, ProblemError, sha256Hex, type UserRole } from '@vip/shared-schema';
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { RateCredential } from '../http/rate-limit.js';
import type { Guards } from '../http/routes.js';
import type { Clock } from '../runtime.js';
import type { AccessTokens } from './access-tokens.js';

export interface Principal {
  userId: string;
  role: UserRole;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the bearer guard. */
    principal?: Principal;
    /** Set when the request came with a live platform API key instead of a user token. */
    platformName?: string;
    /** The id of that key (limits count per key). */
    apiKeyId?: string;
  }
}

/** Finds the live (unrevoked) API key with this SHA-256; the platforms domain answers it. */
export interface ApiKeyLookup {
  platformOfKey(keyHash: string): Promise<{ platformName: string; keyId: string } | null>;
}

export interface GuardDeps {
  tokens: AccessTokens;
  clock: Clock;
  apiKeys: ApiKeyLookup;
}

const MAX_KEY_LENGTH = 256;

/**
 * Every guard of the origin, built once (server.ts). Declares on `app` the request properties the
 * guards set, so every request has the same shape from the start.
 */
export function createGuards(app: FastifyInstance, deps: GuardDeps): Guards {
  app.decorateRequest('principal', undefined);
  app.decorateRequest('platformName', undefined);
  app.decorateRequest('apiKeyId', undefined);

  const bearer: preHandlerAsyncHookHandler = async (request) => {
    const header = request.headers.authorization;
    if (!header) throw new ProblemError('authentication_required', 'Send Authorization: Bearer <access token>.');
    const match = /^Bearer ([A-Za-z0-9_.~+/=-]+)$/i.exec(header);
    if (!match) {
      throw new ProblemError(
        'invalid_token',
        'Send the access token as Authorization: Bearer <access_token> (the word Bearer, one space, the token).',
      );
    }
    const claims = await deps.tokens.verify(match[1]!, deps.clock.now());
    request.principal = { userId: claims.sub, role: claims.role };
  };
  const adminRole: preHandlerAsyncHookHandler = async (request) => {
    if (principalOf(request).role !== 'admin') throw new ProblemError('forbidden', 'This route is for administrators.');
  };

  /**
   * For the origin routes a platform calls with the key it uses at the gate (the audit log, compare,
   * screening, licence requests, webhooks): X-API-Key (without an Authorization header) sets
   * `request.platformName`; otherwise a Bearer token is required as everywhere else. Malformed,
   * unknown and revoked keys are all the same 401.
   */
  const platformOrUser: preHandlerAsyncHookHandler = async function resolveCaller(request, reply) {
    const apiKey = request.headers['x-api-key'];
    if (typeof apiKey === 'string' && !request.headers.authorization) {
      const invalid = new ProblemError('invalid_credentials', 'The API key is not valid.');
      if (!apiKey.startsWith(API_KEY_PREFIX) || apiKey.length > MAX_KEY_LENGTH) throw invalid;
      const key = await deps.apiKeys.platformOfKey(await sha256Hex(apiKey));
      if (!key) throw invalid;
      request.platformName = key.platformName;
      request.apiKeyId = key.keyId;
      return;
    }
    await bearer.call(this, request, reply);
  };

  /** For the routes only a platform calls (a licence request): any other credential is 403, before the body is read. */
  const platformKey: preHandlerAsyncHookHandler = async function requirePlatformKey(request, reply) {
    await platformOrUser.call(this, request, reply);
    if (request.platformName === undefined) throw new ProblemError('forbidden', 'This route is for platform API keys.');
  };

  /** For public routes with higher limits for known callers: credentials, when sent, must be valid (as platformOrUser); none is anonymous. */
  const platformUserOrAnonymous: preHandlerAsyncHookHandler = async function resolveOptionalCaller(request, reply) {
    if (request.headers['x-api-key'] === undefined && request.headers.authorization === undefined) return;
    await platformOrUser.call(this, request, reply);
  };

  return { bearer, admin: [bearer, adminRole], platformOrUser, platformKey, platformUserOrAnonymous };
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new ProblemError('authentication_required');
  return request.principal;
}

export type Caller = { kind: 'platform'; platformName: string; keyId: string } | ({ kind: 'user' } & Principal);

/** Who passed the platformOrUser guard. */
export function callerOf(request: FastifyRequest): Caller {
  if (request.platformName !== undefined && request.apiKeyId !== undefined) {
    return { kind: 'platform', platformName: request.platformName, keyId: request.apiKeyId };
  }
  if (!request.principal) throw new ProblemError('authentication_required');
  return { kind: 'user', ...request.principal };
}

/** Who an audit entry names for a caller: its API key, or the signed-in user (a Principal is one). */
export const actorOf = (caller: Caller | Principal): AuditActor =>
  'kind' in caller && caller.kind === 'platform' ? { type: 'api_key', keyId: caller.keyId } : { type: 'user', userId: caller.userId };

/** What a rate limit counts a caller by: the API key, or the signed-in user. */
export const credentialOf = (caller: Caller): RateCredential =>
  caller.kind === 'platform' ? `key:${caller.keyId}` : `user:${caller.userId}`;
