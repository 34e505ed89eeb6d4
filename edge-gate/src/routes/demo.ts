import {
  DEMO_NO_REGISTRY_RECORD_VARIANT_A,
  type DemoOutcomeVariantA,
  type DemoOutcomeVariantB,
  type DemoResponse,
  type PreSynthesisCheckRequest,
} from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { enforceLimit } from '../admission/limits.js';
import type { EdgeConfig } from '../config.js';
import type { GateVerdict } from '../gate/outcomes.js';
import { licenseUrl, shapeResult } from '../gate/results.js';
import type { MountRecord } from '../http/mount-record.js';

const contract = edgeRoutes.demo;
const GATE = `POST ${edgeRoutes.preSynthesisCheck.path}`;

function variantAOutcomes(config: EdgeConfig, voiceId: string, newId: () => string) {
  const outcome = (fields: Omit<DemoOutcomeVariantA, 'check_id'>): DemoOutcomeVariantA => ({ ...fields, check_id: newId() });
  return {
    no_registry_record: outcome(DEMO_NO_REGISTRY_RECORD_VARIANT_A),
    protected_no_license: outcome({
      protected: true,
      action: 'authorization_denied',
      decision: 'deny',
      license_status: 'unlicensed',
      consent_status: 'active',
      platform_decision_required: false,
      license_url: licenseUrl(config, voiceId),
    }),
    protected_licensed: outcome({
      protected: true,
      action: 'authorized',
      decision: 'allow',
      license_status: 'licensed',
      consent_status: 'active',
      platform_decision_required: false,
      license_url: null,
    }),
  };
}

function variantBOutcomes(config: EdgeConfig, voiceId: string, newId: () => string) {
  const outcome = (fields: Omit<DemoOutcomeVariantB, 'check_id'>): DemoOutcomeVariantB => ({ ...fields, check_id: newId() });
  return {
    no_registry_record: outcome({
      protected: false,
      action: 'no_registry_record',
      authorization_denied: false,
      platform_decision_required: true,
      license_url: null,
    }),
    protected_no_license: outcome({
      protected: true,
      action: 'blocked',
      authorization_denied: true,
      platform_decision_required: false,
      license_url: licenseUrl(config, voiceId),
    }),
    protected_licensed: outcome({
      protected: true,
      action: 'allow_licensed',
      authorization_denied: false,
      platform_decision_required: false,
      license_url: null,
    }),
  };
}

/** Stands where a real approval carries its signed single-use token; the demo signs nothing. */
const EXAMPLE_TOKEN = 'example-authorization-token.a-compact-JWS-signed-by-the-gate.see-/.well-known/jwks.json';

/**
 * The bodies the gate itself answers for the example request, one per outcome, shaped by the same
 * function as real answers (so the variant's fields, the approval_token alias and license_url match).
 */
function productionResponses(config: EdgeConfig, voiceId: string, newId: () => string, nowMs: number) {
  const shape = (decision: GateVerdict) => shapeResult(config, config.variant, decision, voiceId, newId(), nowMs).body;
  const expiresAt = new Date((Math.floor(nowMs / 1000) + config.authorizationTokenTtlSeconds) * 1000).toISOString();
  const approved = { consent_status: 'active', license_status: 'licensed' } as const;
  return {
    approved: shape({ outcome: 'approved', ...approved, token: EXAMPLE_TOKEN, jti: newId(), expires_at: expiresAt }),
    blocked: shape({ outcome: 'blocked', reason: 'no_license', consent_status: 'active', license_status: 'unlicensed' }),
    no_registry_record: shape({ outcome: 'unknown' }),
  } as DemoResponse['production_responses'];
}

/**
 * The public demo (docs/CONTRACT.md#the-demo): an example request, the answer the gate gives it (a made-up
 * voice has no registry record) and every possible outcome, in the deployed variant's schema.
 * Check ids here are examples; demo calls are not audited.
 */
export function mountDemo(mounts: MountRecord) {
  mounts.serve(contract, async (c) => {
    const config = c.get('config');
    const { newId, now } = c.get('runtime');
    const ip = c.req.header('cf-connecting-ip') ?? 'unknown';
    await enforceLimit(c, {
      key: `demo:ip:${ip}`,
      counted: 'demo calls from this address',
      quota: config.limits.demoPerHour,
      windowSeconds: 3600,
    });

    const example: PreSynthesisCheckRequest = { voice_id: newId(), platform_name: 'Example TTS', intended_use: 'audiobook' };
    const common = {
      demo: true,
      variant: config.variant,
      endpoint: GATE,
      example_request: example,
      production_responses: productionResponses(config, example.voice_id, newId, now()),
    } as const;
    if (config.variant === 'A') {
      const possible = variantAOutcomes(config, example.voice_id, newId);
      return c.json({
        ...common,
        response_schema: { ...possible.no_registry_record, check_id: newId() },
        possible_responses: possible,
      } satisfies DemoResponse);
    }
    const possible = variantBOutcomes(config, example.voice_id, newId);
    return c.json({
      ...common,
      response_schema: { ...possible.no_registry_record, check_id: newId() },
      possible_responses: possible,
    } satisfies DemoResponse);
  });
}
