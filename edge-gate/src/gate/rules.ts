import type { BlockReason, ConsentStatus, IntendedUse, LicenseStatus, VoiceIndexRecord, VoiceLicenseIndex } from '@vip/shared-schema';

/** What a gate call asks (docs/CONTRACT.md#gate-request), with the licence token already hashed. */
export interface GateQuery {
  platform_name: string;
  intended_use: IntendedUse;
  license_token_hash: string | null;
}

export type Evaluation =
  | { outcome: 'unknown' }
  | { outcome: 'blocked'; reason: BlockReason; consent_status: ConsentStatus; license_status: LicenseStatus }
  | { outcome: 'approved'; consent_status: 'active'; license_status: 'licensed' };

/**
 * The gate's outcome rules (docs/CONTRACT.md#states-and-gate-rules) over one voice's index record. Pure, so the KV fast path
 * and the voice's desk (objects/platform-desk.ts) judge with the same code. A licence counts while it is active, not past
 * `expires_at`, and issued to this platform; a `license_token`, when given, must be one of those.
 */
export function evaluate(record: VoiceIndexRecord | null, query: GateQuery, nowMs: number): Evaluation {
  if (!record) return { outcome: 'unknown' };
  const live = liveLicences(record, query, nowMs);
  const covering = live.some((licence) => licence.scopes.includes(query.intended_use));
  const license_status: LicenseStatus = covering ? 'licensed' : 'unlicensed';
  const consent_status = record.consent_status;
  if (consent_status !== 'active') return { outcome: 'blocked', reason: 'no_consent', consent_status, license_status };
  if (live.length === 0) return { outcome: 'blocked', reason: 'no_license', consent_status, license_status };
  if (!covering) return { outcome: 'blocked', reason: 'scope_mismatch', consent_status, license_status };
  return { outcome: 'approved', consent_status, license_status: 'licensed' };
}

/**
 * The licence an approval of `query` rests on: the first live licence covering the use (the one the
 * licence token names, when given). A token is bound to it, so revoking it voids the token whatever
 * other licence the platform holds (docs/DECISIONS.md#approvals-a-seal-instead-of-a-row).
 */
export function approvingLicence(record: VoiceIndexRecord, query: GateQuery, nowMs: number): VoiceLicenseIndex | undefined {
  return liveLicences(record, query, nowMs).find((licence) => licence.scopes.includes(query.intended_use));
}

function liveLicences(record: VoiceIndexRecord, query: GateQuery, nowMs: number): VoiceLicenseIndex[] {
  return record.licenses.filter(
    (licence) =>
      licence.status === 'active' &&
      Date.parse(licence.expires_at) > nowMs &&
      licence.platform_name === query.platform_name &&
      (query.license_token_hash === null || licence.token_hash === query.license_token_hash),
  );
}

/**
 * Whether a record refuses every approval that a withdrawal or erasure would: a desk holding it voids
 * every token issued so far, since they must die with the consent (docs/DECISIONS.md#a-hot-voice-issue-17).
 */
export const voidsTokens = (record: VoiceIndexRecord | null): boolean => record === null || record.consent_status !== 'active';
