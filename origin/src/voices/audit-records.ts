import type { AuditRecord } from '@vip/shared-schema';
import type { Principal } from '../auth/guard.js';

/** The audit record of a refused enrollment (on the matched voice) or of an erasure. */
export function voiceAuditRecord(
  kind: 'enrollment.refused' | 'voice.deleted',
  voiceId: string,
  principal: Principal,
  now: Date,
  checkId: string,
): AuditRecord {
  const refused = kind === 'enrollment.refused';
  return {
    check_id: checkId,
    kind,
    decided_at: now.toISOString(),
    voice_id: voiceId,
    platform_name: null,
    intended_use: null,
    decision: refused ? 'deny' : null,
    action: refused ? 'refused' : 'deleted',
    reason: refused ? 'identity_conflict' : null,
    license_status: null,
    consent_status: null,
    caller_type: 'user',
    caller_id: principal.userId,
    token_jti: null,
  };
}
