import { type AuditRecord, auditCaller, buildAuditRecord } from '@vip/shared-schema';
import { actorOf, type Principal } from '../auth/index.js';

type VoiceAuditKind = 'enrollment.completed' | 'enrollment.refused' | 'voice.deleted';

/**
 * The audit record of an owner's act on a voice: an enrollment (on the new voice; `reason`
 * `pending_review` when it is held), a refused enrollment (on the matched voice, `reason`
 * `identity_conflict`, recorded as the service's), or an erasure.
 */
export function voiceAuditRecord(
  kind: VoiceAuditKind,
  voiceId: string,
  principal: Principal,
  now: Date,
  checkId: string,
  reason: string | null = null,
): AuditRecord {
  return buildAuditRecord(kind, {
    check_id: checkId,
    decided_at: now,
    voice_id: voiceId,
    reason,
    // An owner also reads the entries they caused (audit/store.ts): a refused enrollment's entry sits
    // on the other owner's voice, so it is the service's, or the refused caller would learn that voice's id.
    ...auditCaller(kind === 'enrollment.refused' ? { type: 'system' } : actorOf(principal)),
  });
}
