import { type AuditRecord, ProblemError, routerPath, sha256Hex } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { Hono } from 'hono';
import { gateAuthentication } from '../auth/authenticate.js';
import { readVoiceFromKv } from '../edge-index/voices.js';
import { admitAndRecord, checkIdInShard, recentlyRefused, recordDecision, shardOfKey } from '../gate/audit-outbox.js';
import { auditedCaller, gateLimit, holderOf, platformRefusal } from '../gate/callers.js';
import { applyRateDecision } from '../gate/rate-limit.js';
import { auditFields, shapeResult } from '../gate/results.js';
import { evaluate, type GateQuery } from '../gate/rules.js';
import type { AppEnv } from '../http/context.js';
import { jsonBody, jsonBodyLimit } from '../http/json-body.js';
import type { Decision } from '../objects/VoiceGate.js';

const contract = edgeRoutes.preSynthesisCheck;

/**
 * The consent gate (spec 2.4, 2.5, 3). KV answers unknown and blocked voices; an approval is only
 * ever given by the voice's VoiceGate object, which issues the token in the same step. The
 * decision is durable in the audit outbox before the answer leaves.
 *
 * Every request is counted against the caller's limit, and a refused one gets its 429 whatever its
 * body and whatever was decided. The limit is counted by the AuditOutbox shard that holds the
 * caller's key, so a decision is admitted and recorded in one object call: reading the body and the
 * voice first changes nothing. A possible approval is decided by VoiceGate before that call, so a
 * refused request may leave a token behind that nobody ever sees (it expires unused); a caller this
 * isolate has seen refused is counted first instead, so a flood over the limit costs no signatures.
 */
export function mountPreSynthesisCheck(app: Hono<AppEnv>) {
  app.post(routerPath(contract), gateAuthentication, jsonBodyLimit, async (c) => {
    const config = c.get('config');
    const caller = c.get('caller');
    const runtime = c.get('runtime');
    const limit = gateLimit(config, caller, 'gate');

    let request: Awaited<ReturnType<typeof jsonBody<typeof contract.body>>>;
    try {
      request = await jsonBody(c, contract.body);
      const refusal = platformRefusal(caller, request.platform_name);
      if (refusal) throw new ProblemError('platform_mismatch', refusal);
    } catch (error) {
      // Counted all the same; the limit's answer comes first.
      applyRateDecision(c, limit, await admitAndRecord(c.env, limit, runtime.now(), null));
      throw error;
    }

    const checkId = checkIdInShard(runtime.newId(), shardOfKey(limit.key));
    const nowMs = runtime.now();
    const query: GateQuery = {
      platform_name: request.platform_name,
      intended_use: request.intended_use,
      license_token_hash: request.license_token === undefined ? null : await sha256Hex(request.license_token),
    };
    const [indexed, audited] = await Promise.all([readVoiceFromKv(c.env.EDGE_INDEX, request.voice_id), auditedCaller(config, caller)]);
    const fastPath = evaluate(indexed?.record ?? null, query, nowMs);
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

    let decision: Decision;
    if (fastPath.outcome !== 'approved') {
      // Unknown or refused on the KV copy: admission and the durable record in one call.
      decision = fastPath;
      applyRateDecision(c, limit, await admitAndRecord(c.env, limit, nowMs, auditRecord(decision)));
    } else {
      // A possible approval: confirmed (and its token issued) by VoiceGate only.
      const admittedFirst = recentlyRefused(limit.key, nowMs);
      if (admittedFirst) applyRateDecision(c, limit, await admitAndRecord(c.env, limit, nowMs, null));
      const gate = c.env.VOICE_GATE.get(c.env.VOICE_GATE.idFromName(request.voice_id));
      decision = await gate.decide({
        ...query,
        voice_id: request.voice_id,
        check_id: checkId,
        jti: runtime.newId(),
        holder: holderOf(caller),
        now_ms: nowMs,
      });
      if (admittedFirst) await recordDecision(c.env, auditRecord(decision));
      else applyRateDecision(c, limit, await admitAndRecord(c.env, limit, nowMs, auditRecord(decision)));
    }
    const { body, headers } = shapeResult(config, config.variant, decision, request.voice_id, checkId, nowMs);
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    return c.json(body);
  });
}
