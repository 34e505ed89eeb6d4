import type { GateVariant, PreSynthesisCheckResult } from '@vip/shared-schema';
import type { EdgeConfig } from '../config.js';
import type { GateVerdict } from './outcomes.js';

/**
 * `license_url`: the licensing page with the voice as a query parameter (docs/CONTRACT.md#gate-results). The URL is
 * built once per licensing page with a stand-in voice id, which each answer swaps for its own: voice
 * ids are UUIDs, which a query string carries as they are, so the result is what building the URL
 * for that voice gives, without parsing a URL on every blocked answer.
 */
const STAND_IN_VOICE_ID = '00000000-0000-4000-8000-000000000000';
const licensePages = new Map<string, string>();

export function licenseUrl(config: EdgeConfig, voiceId: string): string {
  let page = licensePages.get(config.licensingUrl);
  if (page === undefined) {
    const url = new URL(config.licensingUrl);
    url.searchParams.set('voice_id', STAND_IN_VOICE_ID);
    page = url.toString();
    licensePages.set(config.licensingUrl, page);
  }
  return page.replace(STAND_IN_VOICE_ID, voiceId);
}

/**
 * Variant A keeps `approval_token` until the sunset date, or longer when a setting says so. The
 * sunset is the day's last whole second (23:59:59, for the `Sunset` header); the alias lives to
 * the day's last millisecond, so the whole of it, not only up to 23:59:59.000.
 */
export function approvalAliasActive(config: EdgeConfig, nowMs: number): boolean {
  const sunset = config.approvalAlias.sunset;
  const dayAfter = Date.UTC(sunset.getUTCFullYear(), sunset.getUTCMonth(), sunset.getUTCDate() + 1);
  return config.approvalAlias.keepAfterSunset || nowMs < dayAfter;
}

/** RFC 9745 `Deprecation: @<unix seconds>` and RFC 8594 `Sunset: <HTTP-date>`. */
export function deprecationHeaders(config: EdgeConfig): Record<string, string> {
  return {
    deprecation: `@${Math.floor(config.approvalAlias.deprecatedAt.getTime() / 1000)}`,
    sunset: config.approvalAlias.sunset.toUTCString(),
    link: '</docs#preSynthesisCheck>; rel="deprecation"; type="text/html"',
  };
}

export interface Shaped {
  body: PreSynthesisCheckResult;
  headers: Record<string, string>;
}

/** Turns a decision into the gate's body (docs/CONTRACT.md#gate-results) in the deployed variant. */
export function shapeResult(
  config: EdgeConfig,
  variant: GateVariant,
  decision: GateVerdict,
  voiceId: string,
  checkId: string,
  nowMs: number,
): Shaped {
  if (decision.outcome === 'unknown') {
    return { body: { action: 'no_registry_record', platform_decision_required: true, voice_id: null, check_id: checkId }, headers: {} };
  }
  if (decision.outcome === 'blocked') {
    return {
      body: {
        status: 'blocked',
        action: 'authorization_denied',
        reason: decision.reason,
        voice_id: voiceId,
        license_url: licenseUrl(config, voiceId),
        check_id: checkId,
        authorization_denied: true,
      },
      headers: {},
    };
  }
  const approved = {
    status: 'approved',
    voice_id: voiceId,
    consented: true,
    licensed: true,
    expires_at: decision.expires_at,
    check_id: checkId,
  } as const;
  if (variant === 'B') return { body: { ...approved, approval_token: decision.token }, headers: {} };
  if (!approvalAliasActive(config, nowMs)) return { body: { ...approved, authorization_token: decision.token }, headers: {} };
  return {
    body: { ...approved, authorization_token: decision.token, approval_token: decision.token },
    headers: deprecationHeaders(config),
  };
}

/** The audit's words for a decision (docs/CONTRACT.md#gate-results, docs/CONTRACT.md#states-and-gate-rules): action, reason, statuses and, for an approval, its licence's terms (the action gives the decision, shared-schema/src/audit-kinds.ts). */
export function auditFields(decision: GateVerdict): {
  action: 'authorized' | 'authorization_denied' | 'no_registry_record';
  reason: string | null;
  license_status: 'licensed' | 'unlicensed' | 'not_applicable';
  consent_status: 'active' | 'withdrawn' | 'unknown';
  license_terms_sha256?: string | undefined;
} {
  if (decision.outcome === 'unknown') {
    return {
      action: 'no_registry_record',
      reason: null,
      license_status: 'not_applicable',
      consent_status: 'unknown',
    };
  }
  if (decision.outcome === 'blocked') {
    const { reason, license_status, consent_status } = decision;
    return { action: 'authorization_denied', reason, license_status, consent_status };
  }
  // The licence's terms go on the record of the approval they backed (docs/CONTRACT.md#licence-terms).
  const { license_terms_sha256 } = decision;
  return { action: 'authorized', reason: null, license_status: 'licensed', consent_status: 'active', license_terms_sha256 };
}
