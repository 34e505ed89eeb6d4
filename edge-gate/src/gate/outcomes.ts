import type { RateDecision } from './rate-window.js';
import type { Evaluation, GateQuery } from './rules.js';

/**
 * What the gate's deciding and redeeming produce, shared by the voice's desk that produces them (objects/platform-desk.ts)
 * and the routes that answer with them.
 */

/** A possible approval as the voice's desk for the platform is asked to confirm it. */
export interface DecideInput extends GateQuery {
  voice_id: string;
  check_id: string;
  /** Who may redeem the token (see gate/callers.ts holderOf); the token names it as `azp`. */
  holder: string;
  now_ms: number;
}

/**
 * What the gate answers on: a refusal or unknown voice as judged, or an approval with its token.
 * Named apart from the audit log's `Decision` (allow / deny / unresolved, shared-schema) and the rate
 * window's `RateDecision` (admitted or not): three different things a reader would otherwise confuse.
 */
export type GateVerdict =
  | Exclude<Evaluation, { outcome: 'approved' }>
  | {
      outcome: 'approved';
      consent_status: 'active';
      license_status: 'licensed';
      token: string;
      jti: string;
      expires_at: string;
      /** The terms of the licence the approval rests on, for its audit entry (absent from records published before terms existed). */
      license_terms_sha256?: string | undefined;
    };

/** A home shard's answer to a request: the key it came with is revoked, or the limit's decision. */
export type ShardAdmission = { keyRevoked: true } | { keyRevoked: false; rate: RateDecision };

export type Redemption = 'redeemed' | 'already_used' | 'revoked' | 'unknown';
