/**
 * `@vip/shared-schema/client`: a typed client for TTS platforms (the edge gate), for owners and
 * admins (the origin), and a webhook verifier for receivers. Types come from the shared zod
 * schemas and route contracts; answers are parsed with them, so a drifted contract throws.
 */

export type { AuditReceipt } from '../routes/origin/audit.js';
export { type Checkpoint, TlogFormatError } from '../tlog.js';
export { ContractError, ProblemError, parseRateLimit, parseRetryAfter, type RateLimitInfo } from './errors.js';
export {
  type ApprovedResult,
  authorizationTokenOf,
  type BlockedResult,
  createGateClient,
  type DemoResponse,
  type GateClient,
  type GateClientOptions,
  isApproved,
  isBlocked,
  isNoRegistryRecord,
  type NoRegistryRecordResult,
  type PreSynthesisCheckRequest,
  type PreSynthesisCheckResult,
  type RedeemResult,
} from './gate.js';
export type { CallOptions, ResponseInfo, TokenSource } from './http.js';
export {
  type AudioInput,
  type CompareInput,
  createOriginClient,
  type DisputeInput,
  type EnrollInput,
  type OriginClient,
  type OriginClientOptions,
  type ReceiptOptions,
  type ScreenInput,
  type SpokenConsentInput,
} from './origin.js';
export { type ScreenedCheck, type ScreenThenCheckInput, screenThenCheck } from './protect.js';
export { type VerifiedReceipt, verifyReceipt } from './receipt.js';
export {
  type HeaderSource,
  type VerifiedWebhook,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookTestDelivery,
  WebhookVerificationError,
  type WebhookVerificationFailure,
  webhookTestDeliverySchema,
} from './webhook.js';
