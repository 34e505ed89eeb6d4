import { API_KEY_PREFIX, ProblemError, sha256Hex } from '@vip/shared-schema';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Guards } from '../auth/guard.js';
import type { Database } from '../db/client.js';
import { type AuditReader, platformOfKey } from './store.js';

declare module 'fastify' {
  interface FastifyRequest {
    auditReader?: AuditReader;
  }
}

const MAX_KEY_LENGTH = 256;

/**
 * Bearer (owner or admin) or X-API-Key (a platform): the audit log is the one origin route a
 * platform reads, with the key it uses at the gate. Unknown and revoked keys are both 401.
 */
export function auditReaderGuard(db: Database, guards: Guards): preHandlerAsyncHookHandler {
  return async function resolveReader(this: unknown, request, reply) {
    const apiKey = request.headers['x-api-key'];
    if (typeof apiKey === 'string' && !request.headers.authorization) {
      const invalid = new ProblemError('invalid_credentials', 'The API key is not valid.');
      if (!apiKey.startsWith(API_KEY_PREFIX) || apiKey.length > MAX_KEY_LENGTH) throw invalid;
      const platformName = await platformOfKey(db, await sha256Hex(apiKey));
      if (!platformName) throw invalid;
      request.auditReader = { kind: 'platform', platformName };
      return;
    }
    await guards.bearer.call(this as never, request, reply);
    const principal = request.principal!;
    request.auditReader = principal.role === 'admin' ? { kind: 'admin' } : { kind: 'owner', userId: principal.userId };
  };
}

export function readerOf(request: FastifyRequest): AuditReader {
  if (!request.auditReader) throw new ProblemError('authentication_required');
  return request.auditReader;
}
