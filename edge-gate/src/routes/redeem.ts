import { buildAuditRecord, ProblemError, type RedeemResult } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { newWatermarkId, WATERMARK_ALGORITHM, type WatermarkGrant } from '@vip/shared-schema/watermark/index';
import { countRequest } from '../admission/gate-check.js';
import { gateAuthentication } from '../auth/authenticate.js';
import { verifyAuthorizationToken } from '../gate/authorization-token.js';
import { auditedCaller, gateLimit, mayRedeem } from '../gate/callers.js';
import type { Redemption } from '../gate/outcomes.js';
import { jsonBody, jsonBodyLimit } from '../http/json-body.js';
import type { MountRecord } from '../http/mount-record.js';
import { applyRateDecision } from '../http/rate-limit-headers.js';
import { recordDecision } from '../objects/caller-home-client.js';
import { redeemAtDesk } from '../objects/platform-desk-client.js';

const contract = edgeRoutes.redeem;

const REFUSALS: Record<Exclude<Redemption, 'redeemed'> | 'not_holder', () => ProblemError> = {
  already_used: () => new ProblemError('token_already_used', 'This authorization token has already been redeemed.'),
  revoked: () => new ProblemError('token_revoked', 'The consent or licence behind this token has been withdrawn.'),
  unknown: () => new ProblemError('token_revoked', 'This token is no longer known to the gate; the voice may have been erased.'),
  not_holder: () => new ProblemError('platform_mismatch', 'Only the platform the token was issued to may redeem it.'),
};

/**
 * Single-use redemption (docs/CONTRACT.md#authorization-tokens): the signature and expiry are checked here, the one
 * use at the voice's desk for the platform. Redemptions and refused repeats are audited.
 */
export function mountRedeem(mounts: MountRecord) {
  mounts.serve(contract, gateAuthentication, jsonBodyLimit, async (c) => {
    const config = c.get('config');
    const caller = c.get('caller');
    const runtime = c.get('runtime');
    const limit = gateLimit(config, caller, 'redeem');
    await countRequest(c.env, caller, limit, runtime.now(), applyRateDecision.bind(null, c, limit));
    const { token } = await jsonBody(c, contract.body);
    const nowMs = runtime.now();
    const claims = await verifyAuthorizationToken(config, token, nowMs);
    if (caller.kind === 'platform' && caller.platform_name !== claims.platform) throw REFUSALS.not_holder();
    if (!mayRedeem(caller, claims.azp)) throw REFUSALS.not_holder();

    const outcome = await redeemAtDesk(c.env, claims, nowMs);
    if (outcome === 'unknown') throw REFUSALS.unknown();

    const redemptionCheckId = runtime.newId();
    // One synthesis, one redemption, one mark: a fresh random id, which the origin registers to this
    // redemption when it collects the record (docs/DECISIONS.md#the-watermark-in-the-service).
    const watermark: WatermarkGrant = { alg: WATERMARK_ALGORITHM, id: newWatermarkId() };
    const record = buildAuditRecord('authorization.redeemed', {
      check_id: redemptionCheckId,
      decided_at: new Date(nowMs),
      voice_id: claims.voice_id,
      platform_name: claims.platform,
      intended_use: claims.intended_use,
      action: outcome === 'redeemed' ? 'redeemed' : 'refused',
      reason: outcome === 'redeemed' ? null : outcome === 'already_used' ? 'token_already_used' : 'token_revoked',
      license_status: outcome === 'redeemed' ? 'licensed' : null,
      consent_status: outcome === 'redeemed' ? 'active' : null,
      ...(await auditedCaller(config, caller)),
      token_jti: claims.jti,
    });
    await recordDecision(c.env, outcome === 'redeemed' ? { ...record, watermark_id: watermark.id } : record);
    if (outcome !== 'redeemed') throw REFUSALS[outcome]();
    return c.json({
      voice_id: claims.voice_id,
      platform_name: claims.platform,
      intended_use: claims.intended_use,
      check_id: claims.check_id,
      jti: claims.jti,
      redemption_check_id: redemptionCheckId,
      watermark,
    } satisfies RedeemResult);
  });
}
