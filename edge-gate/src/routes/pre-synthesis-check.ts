import { ProblemError, sha256Hex } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { countRequest, decideCheck } from '../admission/gate-check.js';
import { gateAuthentication } from '../auth/authenticate.js';
import { gateLimit, platformRefusal } from '../gate/callers.js';
import { shapeResult } from '../gate/results.js';
import { jsonBody, jsonBodyLimit } from '../http/json-body.js';
import type { MountRecord } from '../http/mount-record.js';
import { applyRateDecision } from '../http/rate-limit-headers.js';

const contract = edgeRoutes.preSynthesisCheck;

/**
 * The consent gate (docs/CONTRACT.md#gate-request, docs/CONTRACT.md#gate-results, docs/CONTRACT.md#states-and-gate-rules): parse, authorize, admit and decide (admission/gate-check.ts),
 * shape the answer of the deployed variant.
 */
export function mountPreSynthesisCheck(mounts: MountRecord) {
  mounts.serve(contract, gateAuthentication, jsonBodyLimit, async (c) => {
    const config = c.get('config');
    const caller = c.get('caller');
    const runtime = c.get('runtime');
    const limit = gateLimit(config, caller, 'gate');
    const applyRate = applyRateDecision.bind(null, c, limit);

    let request: Awaited<ReturnType<typeof jsonBody<typeof contract.body>>>;
    try {
      request = await jsonBody(c, contract.body);
      const refusal = platformRefusal(caller, request.platform_name);
      if (refusal) throw new ProblemError('platform_mismatch', refusal);
    } catch (error) {
      // Counted all the same; the limit's answer comes first.
      await countRequest(c.env, caller, limit, runtime.now(), applyRate);
      throw error;
    }

    const nowMs = runtime.now();
    const licenseTokenHash = request.license_token === undefined ? null : await sha256Hex(request.license_token);
    const { decision, checkId } = await decideCheck(
      c.env,
      config,
      { request, licenseTokenHash, caller, limit, nowMs, newId: runtime.newId },
      applyRate,
    );
    const { body, headers } = shapeResult(config, config.variant, decision, request.voice_id, checkId, nowMs);
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    return c.json(body);
  });
}
