import type { AuditRecord, PreSynthesisCheckRequest } from '@vip/shared-schema';
import type { Caller } from '../auth/caller.js';
import type { EdgeConfig } from '../config.js';
import { readVoiceFromKv } from '../edge-index/voices.js';
import type { Env } from '../env.js';
import { auditedCaller, holderOf } from '../gate/callers.js';
import type { Decision } from '../gate/outcomes.js';
import type { Limit, RateDecision } from '../gate/rate-window.js';
import { auditFields } from '../gate/results.js';
import { evaluate, type GateQuery } from '../gate/rules.js';
import { admitInHomeShard, recordDecision } from '../objects/audit-outbox-client.js';
import { decideAtVoiceGate } from '../objects/voice-gate-client.js';

/**
 * The gate's admission sequence (spec 2.4, 2.5, 3): count the caller, decide, record durably.
 *
 * Every request is counted against the caller's limit, and a refused one gets its 429 whatever its
 * body and whatever was decided. The limit is counted by the AuditOutbox shard that holds the
 * caller's key, so a decision is admitted and recorded in one object call. KV answers unknown and
 * blocked voices; an approval is only ever given by the voice's VoiceGate object, which issues the
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

async function admit(env: Env, limit: Limit, nowMs: number, record: AuditRecord | null, applyRate: ApplyRate): Promise<void> {
  const rate = await admitInHomeShard(env, limit, nowMs, record);
  if (rate.allowed) refusedUntil.delete(limit.key);
  else {
    if (refusedUntil.size >= REFUSALS_REMEMBERED) refusedUntil.clear();
    refusedUntil.set(limit.key, nowMs + rate.resetSeconds * 1000);
  }
  applyRate(rate);
}

/** A request refused before any decision (its body, its platform): counted all the same. */
export function countUndecided(env: Env, limit: Limit, nowMs: number, applyRate: ApplyRate): Promise<void> {
  return admit(env, limit, nowMs, null, applyRate);
}

export interface GateCheck {
  request: PreSynthesisCheckRequest;
  /** The request's licence token, already hashed. */
  licenseTokenHash: string | null;
  caller: Caller;
  limit: Limit;
  /** In the limit key's home shard (`checkIdInShard`), so admission and record are one call. */
  checkId: string;
  nowMs: number;
  newJti: () => string;
}

/** Decides a well-formed check and makes the decision durable before it is returned. */
export async function decideCheck(env: Env, config: EdgeConfig, check: GateCheck, applyRate: ApplyRate): Promise<Decision> {
  const { request, limit, checkId, nowMs } = check;
  const query: GateQuery = {
    platform_name: request.platform_name,
    intended_use: request.intended_use,
    license_token_hash: check.licenseTokenHash,
  };
  const [indexed, audited] = await Promise.all([readVoiceFromKv(env.EDGE_INDEX, request.voice_id), auditedCaller(config, check.caller)]);
  const auditRecord = (decision: Decision): AuditRecord => ({
    check_id: checkId,
    kind: 'gate.decision',
    decided_at: new Date(nowMs).toISOString(),
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
    await admit(env, limit, nowMs, auditRecord(fastPath), applyRate);
    return fastPath;
  }
  // A possible approval: confirmed (and its token issued) by VoiceGate only.
  const admittedFirst = recentlyRefused(limit.key, nowMs);
  if (admittedFirst) await admit(env, limit, nowMs, null, applyRate);
  const decision = await decideAtVoiceGate(env, {
    ...query,
    voice_id: request.voice_id,
    check_id: checkId,
    jti: check.newJti(),
    holder: holderOf(check.caller),
    now_ms: nowMs,
  });
  if (admittedFirst) await recordDecision(env, auditRecord(decision));
  else await admit(env, limit, nowMs, auditRecord(decision), applyRate);
  return decision;
}
