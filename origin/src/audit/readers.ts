import type { FastifyRequest } from 'fastify';
import { callerOf } from '../auth/index.js';
import type { AuditReader } from './store.js';

/**
 * Who reads the audit log (behind platformOrUserGuard): an admin everything, an owner the entries
 * of their voices and their own checks, a platform key its platform's checks.
 */
export function readerOf(request: FastifyRequest): AuditReader {
  const caller = callerOf(request);
  if (caller.kind === 'platform') return { kind: 'platform', platformName: caller.platformName };
  return caller.role === 'admin' ? { kind: 'admin' } : { kind: 'owner', userId: caller.userId };
}
