import { type AuditActor, type AuditRecord, auditCaller, buildAuditRecord, type ConsentStatus } from '@vip/shared-schema';

/** Who made a registry change: an account, or the service itself (the expiry job). */
/** Who changes a voice's registry record: its owner, or the service (an expiry). */
export type RegistryActor = Extract<AuditActor, { type: 'user' | 'system' }>;

export interface RegistryChange {
  checkId: string;
  kind: 'consent.changed' | 'license.changed';
  voiceId: string;
  /** The licence's platform; null for consent changes. */
  platformName: string | null;
  /** What happened, e.g. `consent_withdrawn` or `license_revoked:<license_id>`. */
  reason: string;
  /** The voice's consent after the change. */
  consentStatus: ConsentStatus;
  actor: RegistryActor;
  decidedAt: Date;
  /** A licence made or renewed: the SHA-256 of its canonical terms after the change. */
  licenseTermsSha256?: string | undefined;
}

/** An origin-side registry change as an audit chain record (no gate fields: it is not a gate decision). */
export function registryAuditRecord(change: RegistryChange): AuditRecord {
  return buildAuditRecord(change.kind, {
    check_id: change.checkId,
    decided_at: change.decidedAt,
    voice_id: change.voiceId,
    platform_name: change.platformName,
    reason: change.reason,
    consent_status: change.consentStatus,
    ...auditCaller(change.actor),
    license_terms_sha256: change.licenseTermsSha256,
  });
}
