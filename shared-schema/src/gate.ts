import { z } from 'zod';
import { isoTimestamp, uuid } from './common.js';
import { BLOCK_REASONS, CONSENT_STATUSES, DECISIONS, GATE_VARIANTS, INTENDED_USES, LICENSE_STATUSES } from './enums.js';
import { platformName } from './platforms.js';
import { watermarkGrantSchema } from './watermark/index.js';

/** docs/CONTRACT.md#gate-request. Unknown fields are refused (422). */
export const preSynthesisCheckRequestSchema = z
  .strictObject({
    voice_id: uuid,
    platform_name: platformName,
    intended_use: z.enum(INTENDED_USES),
    license_token: z.string().min(1).max(512).optional(),
  })
  .meta({ id: 'PreSynthesisCheckRequest' });
export type PreSynthesisCheckRequest = z.infer<typeof preSynthesisCheckRequestSchema>;

/** docs/CONTRACT.md#gate-results, approved. `authorization_token` is Variant A; `approval_token` the alias (A) or only field (B). */
export const approvedResultSchema = z
  .object({
    status: z.literal('approved'),
    authorization_token: z.string().optional(),
    approval_token: z.string().optional(),
    voice_id: uuid,
    consented: z.literal(true),
    licensed: z.literal(true),
    expires_at: isoTimestamp,
    check_id: uuid,
  })
  .meta({ id: 'ApprovedResult' });

export const blockedResultSchema = z
  .object({
    status: z.literal('blocked'),
    action: z.literal('authorization_denied'),
    reason: z.enum(BLOCK_REASONS),
    voice_id: uuid,
    license_url: z.string(),
    check_id: uuid,
    authorization_denied: z.literal(true),
  })
  .meta({ id: 'BlockedResult' });

export const noRegistryRecordResultSchema = z
  .object({
    action: z.literal('no_registry_record'),
    platform_decision_required: z.literal(true),
    voice_id: z.null(),
    check_id: uuid,
  })
  .meta({ id: 'NoRegistryRecordResult' });

export const preSynthesisCheckResultSchema = z
  .union([approvedResultSchema, blockedResultSchema, noRegistryRecordResultSchema])
  .meta({ id: 'PreSynthesisCheckResult' });
export type PreSynthesisCheckResult = z.infer<typeof preSynthesisCheckResultSchema>;

/** Authorization tokens (docs/CONTRACT.md#authorization-tokens): compact JWS signed at the edge, single use by redemption. */
export const authorizationToken = {
  issuer: 'urn:vip:edge',
  type: 'vip-authz+jwt',
  algorithm: 'EdDSA',
} as const;

export const authorizationTokenClaimsSchema = z.object({
  iss: z.literal(authorizationToken.issuer),
  jti: uuid,
  voice_id: uuid,
  platform: z.string(),
  intended_use: z.enum(INTENDED_USES),
  check_id: uuid,
  /** Who may redeem the token (the authorized party): `platform:<name>`, `user:<id>` or `anonymous` (anyone). */
  azp: z.string(),
  iat: z.number().int(),
  exp: z.number().int(),
});
export type AuthorizationTokenClaims = z.infer<typeof authorizationTokenClaimsSchema>;

export const redeemRequestSchema = z.strictObject({ token: z.string().min(1).max(4096) }).meta({ id: 'RedeemRequest' });

/**
 * `check_id` is the decision that issued the token; `redemption_check_id` the audit entry of this
 * redemption; `watermark` what the platform writes into the audio of this one synthesis
 * (docs/DECISIONS.md#the-watermark-in-the-service): a fresh id only the service resolves, to this decision.
 */
export const redeemResultSchema = z
  .object({
    voice_id: uuid,
    platform_name: z.string(),
    intended_use: z.enum(INTENDED_USES),
    check_id: uuid,
    jti: uuid,
    redemption_check_id: uuid,
    watermark: watermarkGrantSchema,
  })
  .meta({ id: 'RedeemResult' });
export type RedeemResult = z.infer<typeof redeemResultSchema>;

/**
 * docs/CONTRACT.md#the-demo: the demo. `response_schema` is a live sample evaluated for `example_request`;
 * `production_responses` adds the bodies the gate returns (docs/CONTRACT.md#gate-results), so code written against the
 * demo parses the real gate.
 */
const demoCommon = {
  protected: z.boolean(),
  platform_decision_required: z.boolean(),
  license_url: z.string().nullable(),
  check_id: uuid,
};

export const demoOutcomeVariantASchema = z
  .object({
    ...demoCommon,
    action: z.enum(['authorized', 'authorization_denied', 'no_registry_record']),
    decision: z.enum(DECISIONS),
    license_status: z.enum(LICENSE_STATUSES),
    consent_status: z.enum(CONSENT_STATUSES),
  })
  .meta({ id: 'DemoOutcomeVariantA' });

export const demoOutcomeVariantBSchema = z
  .object({
    ...demoCommon,
    action: z.enum(['authorized', 'authorization_denied', 'no_registry_record', 'allow_licensed', 'blocked']),
    authorization_denied: z.boolean(),
  })
  .meta({ id: 'DemoOutcomeVariantB' });

const demoResponse = <O extends z.ZodType>(outcome: O, id: string) =>
  z
    .object({
      demo: z.literal(true),
      variant: z.enum(GATE_VARIANTS),
      endpoint: z.string(),
      example_request: preSynthesisCheckRequestSchema,
      response_schema: outcome,
      possible_responses: z.object({ no_registry_record: outcome, protected_no_license: outcome, protected_licensed: outcome }),
      /**
       * What `POST /api/v1/protect/pre-synthesis-check` itself answers for `example_request` in this
       * deployment's variant, one body per outcome, parsed by the same schemas as the gate's answers.
       */
      production_responses: z.object({
        approved: approvedResultSchema,
        blocked: blockedResultSchema,
        no_registry_record: noRegistryRecordResultSchema,
      }),
    })
    .meta({ id });

export const demoResponseVariantASchema = demoResponse(demoOutcomeVariantASchema, 'DemoResponseVariantA');
export const demoResponseVariantBSchema = demoResponse(demoOutcomeVariantBSchema, 'DemoResponseVariantB');
export const demoResponseSchema = z.union([demoResponseVariantASchema, demoResponseVariantBSchema]).meta({ id: 'DemoResponse' });
export type DemoOutcomeVariantA = z.infer<typeof demoOutcomeVariantASchema>;
export type DemoOutcomeVariantB = z.infer<typeof demoOutcomeVariantBSchema>;
export type DemoResponse = z.infer<typeof demoResponseSchema>;

/**
 * The demo's Variant A outcome for a voice with no registry record, less its example `check_id`: the
 * `response_schema` of a Variant A demo, and what its `possible_responses.no_registry_record` says.
 */
export const DEMO_NO_REGISTRY_RECORD_VARIANT_A = {
  protected: false,
  action: 'no_registry_record',
  decision: 'unresolved',
  license_status: 'not_applicable',
  consent_status: 'unknown',
  platform_decision_required: true,
  license_url: null,
} as const satisfies Omit<DemoOutcomeVariantA, 'check_id'>;
