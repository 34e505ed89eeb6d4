import { type AuditRecord, buildAuditRecord, type PreSynthesisCheckRequest, ProblemError } from '@vip/shared-schema';
import type { Caller } from '../auth/caller.js';
import type { EdgeConfig } from '../config.js';
import { readVoiceFromKv } from '../edge-index/voices.js';
import { checkIdInShard } from '../gate/audit-shards.js';
import { auditedCaller, type Home, holderOf, homeOf } from '../gate/callers.js';
import type { GateVerdict } from '../gate/outcomes.js';
import type { Limit, RateDecision } from '../gate/rate-window.js';
import { auditFields } from '../gate/results.js';
import { evaluate, type GateQuery } from '../gate/rules.js';
import { admitInHomeShard, recordDecision } from '../objects/caller-home-client.js';
import { decideAtDesk } from '../objects/platform-desk-client.js';

/**
 * The gate's admission sequence (docs/CONTRACT.md#gate-request, docs/CONTRACT.md#gate-results, docs/CONTRACT.md#states-and-gate-rules): count the caller, decide, record durably.
 *
 * Every request is counted against the caller's limit, and a refused one gets its 429 whatever its
 * body and whatever was decided. The limit is counted by the caller's home CallerHome shard, which
 * also refuses an API key revoked since the KV index copy was read, so a decision is authorized,
 * admitted and recorded in one object call. KV answers unknown and
 * blocked voices; an approval is only ever given by the voice's desk for the platform, which issues the
 * token in the same step, and is decided before that call, so a refused request may leave a token
 * behind that nobody ever sees (it expires unused). A caller this isolate has seen refused is
 * counted first instead, so a flood over the limit costs no signatures.
 *
 * `applyRate` receives each admission: it throws the 429 when refused, which ends the sequence.
 */
export type ApplyRate = (rate: RateDecision) => void;

/**
 * Limit keys this isolate saw refused, with the end of their window: a hint only (the shard's
 * count is the answer), so that a caller over its limit is refused before costly work is done.
 */
const refusedUntil = new Map<string, number>();
const REFUSALS_REMEMBERED = 10_000;

function recentlyRefused(key: string, nowMs: number): boolean {
  return (refusedUntil.get(key) ?? 0) > nowMs;
}

async function admit(env: Env, home: Home, limit: Limit, nowMs: number, record: AuditRecord | null, applyRate: ApplyRate): Promise<void> {
  const admission = await admitInHomeShard(env, home, limit, nowMs, record);
  if (admission.keyRevoked) throw new ProblemError('invalid_credentials', 'The API key is not valid.');
  const { rate } = admission;
  if (rate.allowed) refusedUntil.delete(limit.key);
  else {
    if (refusedUntil.size >= REFUSALS_REMEMBERED) refusedUntil.clear();
    refusedUntil.set(limit.key, nowMs + rate.resetSeconds * 1000);
  }
  applyRate(rate);
}

/**
 * Counts a request that records nothing here: one refused before any decision (its body, its
 * platform), counted all the same, or a redemption. A revoked API key is refused (401).
 */
export function countRequest(env: Env, caller: Caller, limit: Limit, nowMs: number, applyRate: ApplyRate): Promise<void> {
  return admit(env, homeOf(caller), limit, nowMs, null, applyRate);
}

export interface GateCheck {
  request: PreSynthesisCheckRequest;
  /** The request's licence token, already hashed. */
  licenseTokenHash: string | null;
  caller: Caller;
  limit: Limit;
  nowMs: number;
  newId: () => string;
}

/**
 * Decides a well-formed check and makes the decision durable before it is returned, with its
 * check_id: minted in the caller's home shard, so admission and record are one call.
 */
export async function decideCheck(
  env: Env,
  config: EdgeConfig,
  check: GateCheck,
  applyRate: ApplyRate,
): Promise<{ decision: GateVerdict; checkId: string }> {
  const { request, limit, nowMs } = check;
  const home = homeOf(check.caller);
  const checkId = checkIdInShard(check.newId(), home.shard);
  const query: GateQuery = {
    platform_name: request.platform_name,
    intended_use: request.intended_use,
    license_token_hash: check.licenseTokenHash,
  };
  const [indexed, audited] = await Promise.all([readVoiceFromKv(env.EDGE_INDEX, request.voice_id), auditedCaller(config, check.caller)]);
  const auditRecord = (decision: GateVerdict): AuditRecord =>
    buildAuditRecord('gate.decision', {
      check_id: checkId,
      decided_at: new Date(nowMs),
      voice_id: request.voice_id,
      platform_name: request.platform_name,
      intended_use: request.intended_use,
      ...auditFields(decision),
      ...audited,
      token_jti: decision.outcome === 'approved' ? decision.jti : null,
    });

  const fastPath = evaluate(indexed?.record ?? null, query, nowMs);
  if (fastPath.outcome !== 'approved') {
    // Unknown or refused on the KV copy: admission and the durable record in one call.
    await admit(env, home, limit, nowMs, auditRecord(fastPath), applyRate);
    return { decision: fastPath, checkId };
  }
  // A possible approval: confirmed (and its token issued) by the voice's desk only.
  const admittedFirst = recentlyRefused(limit.key, nowMs);
  if (admittedFirst) await admit(env, home, limit, nowMs, null, applyRate);
  const decision = await decideAtDesk(env, {
    ...query,
    voice_id: request.voice_id,
    check_id: checkId,
    holder: holderOf(check.caller),
    now_ms: nowMs,
  });
  if (admittedFirst) await recordDecision(env, auditRecord(decision));
  else await admit(env, home, limit, nowMs, auditRecord(decision), applyRate);
  return { decision, checkId };
}
