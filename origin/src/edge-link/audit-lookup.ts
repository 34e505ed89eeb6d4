import { auditLookupResponseSchema, INTERNAL_AUDIT_LOOKUP_PATH } from '@vip/shared-schema';
import type { EdgeAuditLookup } from '../audit/index.js';
import type { Clock } from '../runtime.js';
import { callEdge, type EdgeTarget } from './edge-call.js';

/** A receipt's caller waits on this call: short, unlike a background pull. */
const LOOKUP_TIMEOUT_MS = 2_000;

/** Asks the edge's audit store, with a signed internal call, whether it holds `checkId` (docs/CONTRACT.md#audit-chain). */
export function edgeAuditLookup(edge: EdgeTarget, clock: Clock, fetchImpl: typeof fetch = globalThis.fetch): EdgeAuditLookup {
  const call = { edge, fetch: fetchImpl, clock, timeoutMs: LOOKUP_TIMEOUT_MS };
  return async (checkId) =>
    (
      await callEdge(
        call,
        INTERNAL_AUDIT_LOOKUP_PATH,
        JSON.stringify({ check_id: checkId }),
        auditLookupResponseSchema,
        'an audit lookup response',
      )
    ).held;
}
