/** Every value the interface names (docs/CONTRACT.md#states-and-gate-rules, docs/CONTRACT.md#answers-to-the-specifications-gaps). Written here once. */

export const INTENDED_USES = ['commercial', 'audiobook', 'podcast', 'music', 'gaming'] as const;
export type IntendedUse = (typeof INTENDED_USES)[number];

export const GATE_STATUSES = ['approved', 'blocked'] as const;
export const GATE_ACTIONS = ['authorized', 'authorization_denied', 'no_registry_record', 'allow_licensed'] as const;
export const BLOCK_REASONS = ['no_consent', 'no_license', 'scope_mismatch'] as const;
export type BlockReason = (typeof BLOCK_REASONS)[number];
export const DECISIONS = ['allow', 'deny', 'unresolved'] as const;
export type Decision = (typeof DECISIONS)[number];
export const LICENSE_STATUSES = ['licensed', 'unlicensed', 'not_applicable'] as const;
export type LicenseStatus = (typeof LICENSE_STATUSES)[number];
export const CONSENT_STATUSES = ['active', 'withdrawn', 'unknown'] as const;
export type ConsentStatus = (typeof CONSENT_STATUSES)[number];

export const GATE_VARIANTS = ['A', 'B'] as const;
export type GateVariant = (typeof GATE_VARIANTS)[number];

export const USER_ROLES = ['owner', 'admin'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/**
 * `pending_review`: the enrollment resembles another owner's voice between the review and the strict
 * identity-conflict points; it is stored but grants nothing until an administrator clears it.
 */
export const VOICE_STATUSES = ['ready', 'pending_review'] as const;
export type VoiceStatus = (typeof VOICE_STATUSES)[number];
/**
 * What an administrator decides about a voice held for review: `clear` keeps it with its owner,
 * `reject` erases it, `transfer` (a disputed voice only) erases it and enrolls the claimant's
 * voiceprint as a voice of the claimant's (docs/DECISIONS.md#voice-disputes).
 */
export const REVIEW_DECISIONS = ['clear', 'reject', 'transfer'] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];
/**
 * Where a voice dispute stands: `open` until an administrator decides; then the decision's outcome,
 * or `voice_deleted` when the disputed voice's owner erased it first.
 */
export const DISPUTE_STATUSES = ['open', 'cleared', 'rejected', 'transferred', 'voice_deleted'] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];
/** Why a voice is held for review: its enrollment resembled another owner's voice, or someone disputes it. */
export const REVIEW_REASONS = ['identity_conflict', 'dispute'] as const;
export type ReviewReason = (typeof REVIEW_REASONS)[number];

/**
 * The kinds of speaker trial, each with its own calibrated operating point
 * (origin/src/voiceprint/operating-points.ts): two recordings; a recording against an enrolled
 * voice; a new enrollment against the enrolled voices.
 */
export const TRIAL_CONDITIONS = ['sample_vs_sample', 'sample_vs_enrolled', 'enrollment_vs_enrollment'] as const;
export type TrialCondition = (typeof TRIAL_CONDITIONS)[number];
export const LICENSE_STATES = ['active', 'revoked', 'expired'] as const;
export type LicenseState = (typeof LICENSE_STATES)[number];

/** Who represented the voice's owner when a licence's terms were set: recorded as stated, never judged. */
export const LICENSE_REPRESENTATIONS = ['none', 'counsel', 'union'] as const;
export type LicenseRepresentation = (typeof LICENSE_REPRESENTATIONS)[number];

/**
 * Where a licence's `description` came from: `stated` by whoever set the terms, or `from_scopes` for a
 * licence made before licences had terms, whose description migration 0018 wrote from its scopes.
 */
export const LICENSE_DESCRIPTION_SOURCES = ['stated', 'from_scopes'] as const;
export type LicenseDescriptionSource = (typeof LICENSE_DESCRIPTION_SOURCES)[number];

/**
 * A platform's request for a licence: `pending` until the owner approves or declines it, or until
 * the voice's consent is withdrawn or the voice deleted (`closed`).
 */
export const LICENSE_REQUEST_STATUSES = ['pending', 'approved', 'declined', 'closed'] as const;
export type LicenseRequestStatus = (typeof LICENSE_REQUEST_STATUSES)[number];

/** The event of a test delivery (`POST /api/v1/webhooks/{id}/test`): sent on request, never subscribed to. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

/**
 * A delivery's state: `pending` until a 2xx (`delivered`), the last scheduled attempt (`failed`), or
 * a 410 Gone that disabled its endpoint (`cancelled`).
 */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'cancelled'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];
