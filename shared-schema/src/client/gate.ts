import type { z } from 'zod';
import type {
  approvedResultSchema,
  blockedResultSchema,
  DemoResponse,
  noRegistryRecordResultSchema,
  PreSynthesisCheckRequest,
  PreSynthesisCheckResult,
  RedeemResult,
} from '../gate.js';
import { edgeRoutes } from '../routes/edge.js';
import { type CallOptions, type ClientOptions, callRoute, createTransport } from './http.js';

/** The three answers of the gate (docs/CONTRACT.md#gate-results), as the shared schemas define them. */
export type ApprovedResult = z.infer<typeof approvedResultSchema>;
export type BlockedResult = z.infer<typeof blockedResultSchema>;
export type NoRegistryRecordResult = z.infer<typeof noRegistryRecordResultSchema>;
export type { DemoResponse, PreSynthesisCheckRequest, PreSynthesisCheckResult, RedeemResult };

/**
 * A platform integration sends its API key; a first-party caller a Bearer access token from the
 * origin. Neither is allowed only against a Variant B deployment (public gate, lower limit).
 */
export type GateClientOptions = ClientOptions;

export interface GateClient {
  /** POST /api/v1/protect/pre-synthesis-check: approved, blocked or no_registry_record (all HTTP 200). */
  preSynthesisCheck(body: PreSynthesisCheckRequest, options?: CallOptions): Promise<PreSynthesisCheckResult>;
  /** POST /api/v1/protect/authorizations/redeem: the first redemption returns the claims; a repeat throws 409 token_already_used. */
  redeemAuthorization(token: string, options?: CallOptions): Promise<RedeemResult>;
  /** GET /api/v1/protect/demo/pre-synthesis-check: public; the deployed variant's demo object. */
  demo(options?: CallOptions): Promise<DemoResponse>;
  /** GET /.well-known/jwks.json: the public keys that verify authorization tokens. */
  jwks(options?: CallOptions): Promise<{ keys: Record<string, unknown>[] }>;
}

export function createGateClient(options: GateClientOptions): GateClient {
  const transport = createTransport(options);
  return {
    preSynthesisCheck: (body, callOptions) => callRoute(transport, edgeRoutes.preSynthesisCheck, { body }, callOptions),
    redeemAuthorization: (token, callOptions) => callRoute(transport, edgeRoutes.redeem, { body: { token } }, callOptions),
    demo: (callOptions) => callRoute(transport, edgeRoutes.demo, {}, callOptions),
    jwks: (callOptions) => callRoute(transport, edgeRoutes.jwks, {}, callOptions),
  };
}

export const isApproved = (result: PreSynthesisCheckResult): result is ApprovedResult => 'status' in result && result.status === 'approved';
export const isBlocked = (result: PreSynthesisCheckResult): result is BlockedResult => 'status' in result && result.status === 'blocked';
export const isNoRegistryRecord = (result: PreSynthesisCheckResult): result is NoRegistryRecordResult =>
  'action' in result && result.action === 'no_registry_record';

/**
 * The token of an approval: `authorization_token` (Variant A), else `approval_token` (Variant B,
 * and Variant A's deprecated alias). Null for any other answer.
 */
export function authorizationTokenOf(result: PreSynthesisCheckResult): string | null {
  if (!isApproved(result)) return null;
  return result.authorization_token ?? result.approval_token ?? null;
}
