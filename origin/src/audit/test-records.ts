import { randomUUID } from 'node:crypto';
import type { AuditRecord } from '@vip/shared-schema';

/** A gate decision as the edge records it; tests override what they look at. */
export function gateRecord(overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    check_id: randomUUID(),
    kind: 'gate.decision',
    decided_at: new Date().toISOString(),
    voice_id: randomUUID(),
    platform_name: 'Test Platform',
    intended_use: 'audiobook',
    decision: 'deny',
    action: 'authorization_denied',
    reason: 'no_license',
    license_status: 'unlicensed',
    consent_status: 'active',
    caller_type: 'api_key',
    caller_id: randomUUID(),
    token_jti: null,
    ...overrides,
  };
}
