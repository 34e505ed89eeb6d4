import { ProblemError, routerPath, sha256Hex } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { Hono } from 'hono';
import { gateAuthentication } from '../auth/authenticate.js';
import { readVoiceFromKv } from '../edge-index/voices.js';
import { recordDecision } from '../gate/audit-outbox.js';
import { auditedCaller, gateLimit, holderOf } from '../gate/callers.js';
import { enforceLimit } from '../gate/rate-limit.js';
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
 */
export function mountPreSynthesisCheck(app: Hono<AppEnv>) {
  app.post(routerPath(contract), gateAuthentication, jsonBodyLimit, async (c) => {
    const config = c.get('config');
    const caller = c.get('caller');
    const runtime = c.get('runtime');
    await enforceLimit(c, gateLimit(config, caller, 'gate'));
    const request = await jsonBody(c, contract.body);
    if (caller.kind === 'platform' && caller.platform_name !== request.platform_name) {
      throw new ProblemError('platform_mismatch', 'This API key belongs to another platform.');
    }

    const checkId = runtime.newId();
    const nowMs = runtime.now();
    const query: GateQuery = {
      platform_name: request.platform_name,
      intended_use: request.intended_use,
      license_token_hash: request.license_token === undefined ? null : await sha256Hex(request.license_token),
    };
    const indexed = await readVoiceFromKv(c.env.EDGE_INDEX, request.voice_id);
    const fastPath = evaluate(indexed?.record ?? null, query, nowMs);
    const gate = c.env.VOICE_GATE.get(c.env.VOICE_GATE.idFromName(request.voice_id));
    const decision: Decision =
      fastPath.outcome === 'approved'
        ? await gate.decide({
            ...query,
            voice_id: request.voice_id,
            check_id: checkId,
            jti: runtime.newId(),
            holder: holderOf(caller),
            now_ms: nowMs,
          })
        : fastPath;

    await recordDecision(c.env, {
      check_id: checkId,
      kind: 'gate.decision',
      decided_at: new Date(nowMs).toISOString(),
      voice_id: request.voice_id,
      platform_name: request.platform_name,
      intended_use: request.intended_use,
      ...auditFields(decision),
      ...(await auditedCaller(config, caller)),
      token_jti: decision.outcome === 'approved' ? decision.jti : null,
    });
    const { body, headers } = shapeResult(config, config.variant, decision, request.voice_id, checkId, nowMs);
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    return c.json(body);
  });
}
