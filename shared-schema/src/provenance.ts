import { z } from 'zod';
import { canonicalJson } from './canonical.js';
import { uuid } from './common.js';
import { INTENDED_USES } from './enums.js';
import { licenseTermsSha256Schema } from './license-terms.js';
import { platformName } from './platforms.js';
import { auditReceiptSchema } from './routes/origin/audit.js';
import { TLOG_PROOF_HEADER } from './tlog.js';
import { WATERMARK_ALGORITHM, watermarkGrantSchema } from './watermark/index.js';

/**
 * Content Credentials that carry the consent (docs/CONTRACT.md#content-credentials): the C2PA
 * assertion a platform embeds in audio it synthesized after the gate approved, naming the decision
 * and carrying the transparency log's proof of it.
 */

/**
 * The assertion's label: an entity-specific C2PA label in this project's namespace (reverse domain
 * of the log's default origin `vip.local`). This is version 1; as C2PA does with its own labels, a
 * later incompatible version would append `.v2` (c2pa-rs reads a `.v1` suffix back without it).
 */
export const AUTHORIZATION_ASSERTION_LABEL = 'local.vip.authorization';

/** c2pa.actions: the audio was created by a model trained on data (IPTC digital source type). */
export const TRAINED_ALGORITHMIC_MEDIA = 'http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia';

/** The audio formats Content Credentials are written into and read from, by MIME type. */
export const PROVENANCE_MIME_TYPES = ['audio/wav', 'audio/mpeg', 'audio/mp4'] as const;
export type ProvenanceMimeType = (typeof PROVENANCE_MIME_TYPES)[number];

/**
 * The authorization assertion. Everything in it is either public in the transparency log already
 * (the leaf is the audit entry, which names no owner) or about the platform itself: no licence
 * token, no owner identity, nothing biometric. Unknown fields are refused, so an assertion means
 * one thing.
 */
export const authorizationAssertionSchema = z
  .strictObject({
    /** The gate decision (its audit entry's check_id). */
    check_id: uuid,
    voice_id: uuid,
    platform_name: platformName,
    intended_use: z.enum(INTENDED_USES),
    /** When the gate decided, exactly as the audit entry says (UTC, milliseconds). */
    decided_at: z.iso.datetime({ precision: 3 }),
    /** The log's origin line (first line of its checkpoints), so a verifier knows which log to ask. */
    log_origin: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^\s]+$/),
    /** The decision's receipt: the leaf and a `c2sp.org/tlog-proof@v1` with its signed checkpoint. */
    receipt: auditReceiptSchema.strict().extend({
      leaf: z.string().max(8 * 1024),
      proof: z
        .string()
        .max(16 * 1024)
        .refine((text) => text.startsWith(`${TLOG_PROOF_HEADER}\n`), `a ${TLOG_PROOF_HEADER} document`),
    }),
    /**
     * The SHA-256 of the canonical terms of the licence the approval rests on, exactly as the logged
     * entry says it (docs/CONTRACT.md#licence-terms): the terms the file was made under. Absent when
     * the entry has none (an approval logged before licences had terms).
     */
    license_terms_sha256: licenseTermsSha256Schema.optional(),
    /** Variant B only: the approval token the gate issued (already redeemed when the audio was made). */
    approval_token: z.string().min(1).max(4096).optional(),
  })
  .meta({ id: 'AuthorizationAssertion' });
export type AuthorizationAssertion = z.infer<typeof authorizationAssertionSchema>;

/**
 * The assertion's exact bytes: the RFC 8785 canonical JSON of the parsed object, carried as a C2PA
 * JSON assertion, so any two implementations that embed the same decision write the same bytes.
 */
export function authorizationAssertionBytes(assertion: AuthorizationAssertion): Uint8Array {
  return new TextEncoder().encode(canonicalJson(authorizationAssertionSchema.parse(assertion)));
}

// --- verifying a file (POST /api/v1/provenance/verify) ---------------------------------------------

/**
 * One verdict per file, the first that applies in this order (docs/CONTRACT.md#content-credentials
 * defines each). Only `authorized` means the voice in the file was synthesized with its owner's
 * consent, by the platform the log names, and still is.
 */
export const PROVENANCE_VERDICTS = [
  'watermark_not_issued',
  'no_credentials_protected_voice',
  'no_credentials',
  'altered',
  'credentials_invalid',
  'no_authorization_protected_voice',
  'no_authorization',
  'authorization_malformed',
  'credentials_watermark_mismatch',
  'receipt_invalid',
  'not_approved',
  'signer_not_registered',
  'signer_not_the_platform',
  'voice_mismatch',
  'authorization_revoked_since',
  'not_redeemed',
  'watermark_authorized',
  'authorized',
] as const;
export type ProvenanceVerdict = (typeof PROVENANCE_VERDICTS)[number];

/**
 * The verdicts only the service can reach: they need its registry (protected voices, consent and
 * licences today, redemptions, which platform registered a certificate) or its speaker model. A
 * verifier without the service (the client's `verifyFile`) reaches the others.
 */
export const SERVICE_ONLY_VERDICTS = [
  'no_credentials_protected_voice',
  'no_authorization_protected_voice',
  'signer_not_the_platform',
  'voice_mismatch',
  'authorization_revoked_since',
  'not_redeemed',
  // A mark's id means something only in the service's registry of ids it issued.
  'watermark_not_issued',
  'credentials_watermark_mismatch',
  'watermark_authorized',
] as const satisfies readonly ProvenanceVerdict[];
export type OfflineProvenanceVerdict = Exclude<ProvenanceVerdict, (typeof SERVICE_ONLY_VERDICTS)[number]>;

/**
 * What a verification may check beyond reading the file; each answer lists in `not_checked` those it
 * did not, and their members are null (docs/DECISIONS.md, "A verification states only what it
 * checked"). `receipt`: `receipt_verified`; `approval`: `approved`; `signer_platform`:
 * `signer.registered_platform`; `voice`: the comparison with the named voice; `consent_and_license_today`:
 * `consent_standing` and `license_standing`; `redemption`: `redeemed`; `protected_voices`: `protected_matches`.
 */
export const PROVENANCE_CHECKS = [
  'receipt',
  'approval',
  'signer_platform',
  'voice',
  'consent_and_license_today',
  'redemption',
  'protected_voices',
] as const;
export type ProvenanceCheck = (typeof PROVENANCE_CHECKS)[number];

export const CREDENTIAL_STATES = ['trusted', 'valid_untrusted', 'invalid'] as const;
export type CredentialState = (typeof CREDENTIAL_STATES)[number];

/** The failure codes that mean the audio changed after signing (the hard binding no longer matches). */
export const ALTERED_AUDIO_CODES = ['assertion.dataHash.mismatch', 'assertion.bmffHash.mismatch'] as const;

const signerSchema = z.object({
  common_name: z.string().nullable(),
  issuer: z.string().nullable().describe("the issuer's organization, as c2pa-rs reports it"),
  serial_number: z.string().nullable(),
  registered_platform: platformName.nullable(),
});

export const provenanceCredentialsSchema = z.object({
  present: z.boolean(),
  state: z.enum(CREDENTIAL_STATES).nullable().describe('C2PA validation: trusted = chains to a certificate registered with this service'),
  failure_codes: z.array(z.string()).describe('c2pa-rs failure codes of the active manifest, e.g. assertion.dataHash.mismatch'),
  signer: signerSchema.nullable(),
  synthetic: z.boolean().describe('a c2pa.created action with digitalSourceType trainedAlgorithmicMedia'),
});

export const provenanceAuthorizationSchema = z.object({
  present: z.boolean(),
  problems: z.array(z.string()),
  check_id: uuid.nullable(),
  voice_id: uuid.nullable(),
  platform_name: z.string().nullable(),
  intended_use: z.string().nullable(),
  decided_at: z.string().nullable(),
  license_terms_sha256: z
    .string()
    .nullable()
    .describe(
      "the hash of the canonical terms of the licence the approval rested on, as the file's assertion carries it; null when it carries none",
    ),
  receipt_verified: z.boolean().nullable(),
  approved: z.boolean().nullable(),
  redeemed: z.boolean().nullable(),
  consent_standing: z.boolean().nullable(),
  license_standing: z.boolean().nullable(),
  receipt: auditReceiptSchema
    .nullable()
    .describe(
      "the decision's receipt as the file carries it (public, like the log), to check without this service; null when none was read",
    ),
});

export const provenanceVoiceSchema = z.object({
  model: z.string().nullable(),
  compared_with: uuid.nullable(),
  similarity: z.number().nullable(),
  probability: z.number().nullable().describe('calibrated probability that the file is the named voice; null for an uncalibrated model'),
  is_same_speaker: z.boolean().nullable(),
  protected_matches: z.array(z.object({ voice_id: uuid, confidence: z.number() })),
});

/**
 * The audio watermark read from the file (docs/WATERMARK.md) and what the service resolves its id to.
 * `id` is public (anyone may run the detector); the decision it names comes from this registry only.
 */
export const provenanceWatermarkSchema = z
  .object({
    found: z.boolean().describe('a mark of this algorithm was read, its payload intact (error-corrected, CRC-checked)'),
    alg: z.literal(WATERMARK_ALGORITHM),
    windows_read: z.number().int().describe('windows of the audio the detector read (at most limits.watermarkDetectMaxWindows)'),
    id: watermarkGrantSchema.shape.id.optional().describe('the payload read, when found'),
    issued: z.boolean().optional().describe('when found: whether this service issued the id at a redemption'),
    check_id: uuid.optional().describe('when issued: the gate decision the mark was issued for'),
    redemption_check_id: uuid.optional().describe('when issued: the redemption that minted the id'),
  })
  .meta({ id: 'ProvenanceWatermark' });
export type ProvenanceWatermark = z.infer<typeof provenanceWatermarkSchema>;

export const provenanceVerificationSchema = z
  .object({
    verdict: z.enum(PROVENANCE_VERDICTS),
    check_id: uuid.describe('the audit entry of this verification'),
    credentials: provenanceCredentialsSchema,
    authorization: provenanceAuthorizationSchema,
    voice: provenanceVoiceSchema,
    watermark: provenanceWatermarkSchema,
    not_checked: z
      .array(z.enum(PROVENANCE_CHECKS))
      .describe('the checks this verification did not run (their members are null); the verdict rests on the others only'),
  })
  .meta({ id: 'ProvenanceVerification' });
export type ProvenanceVerification = z.infer<typeof provenanceVerificationSchema>;

// --- the C2PA soft-binding resolution API (decoupled manifests) -----------------------------------

/**
 * `GET /matches/byBinding?alg=&value=&maxResults=`, as the C2PA Soft Binding Resolution API defines
 * it. `value` is the mark's id, as the soft-binding assertion carries it (10 hex digits), or the
 * base64 of its 5 bytes (the API's own encoding of a binding value).
 */
const maxResults = z.coerce.number().int().min(1).max(100).default(10).describe('The most matches to answer (1–100, default 10).');
export const softBindingQuerySchema = z.strictObject({
  alg: z.string().min(1).max(200),
  value: z
    .string()
    .min(1)
    .max(200)
    .describe('The watermark id: 10 lowercase hex digits, as the soft-binding assertion carries it, or the base64 of its 5 bytes.'),
  maxResults,
});
export const softBindingContentQuerySchema = z.strictObject({ alg: z.string().min(1).max(200).optional(), maxResults });

/** A match: the C2PA API's fields, and (this service's extension) the authorization the mark was issued for. */
export const softBindingMatchSchema = z.object({
  manifestId: z
    .string()
    .describe('the mark’s redemption: GET /api/v1/provenance/manifests/{manifestId} returns the manifest its platform deposited'),
  similarityScore: z.number().int().min(0).max(100).describe('100: a watermark matches exactly or not at all'),
  authorization: z
    .object({
      check_id: uuid.nullable().describe('the gate decision the mark was issued for; null while it waits for its place in the chain'),
      voice_id: uuid,
      platform_name: z.string(),
      intended_use: z.string(),
      decided_at: z.string().nullable().describe('when the gate decided (RFC 3339, UTC); null while the decision waits for the chain'),
      redemption_check_id: uuid,
      receipt: auditReceiptSchema.nullable().describe('the decision’s receipt from this log; null until a signed checkpoint covers it'),
      manifest_deposited: z.boolean().describe('the platform deposited the signed manifest of the marked file (GET the manifestId)'),
    })
    .describe('the authorization the mark was issued for (this service’s extension of the C2PA match)'),
});
export const softBindingQueryResultSchema = z.object({ matches: z.array(softBindingMatchSchema) }).meta({ id: 'SoftBindingQueryResult' });
export type SoftBindingQueryResult = z.infer<typeof softBindingQueryResultSchema>;

export const softBindingAlgListSchema = z
  .object({
    watermarks: z.array(z.object({ alg: z.string() })).describe('The watermark algorithms this service resolves.'),
    fingerprints: z.array(z.object({ alg: z.string() })).describe('The fingerprint algorithms this service resolves: none.'),
  })
  .meta({ id: 'SoftBindingAlgList' });

const manifestId = uuid.describe('The manifest’s id: the redemption of the mark it was deposited for.');
export const manifestParamsSchema = z.strictObject({ manifestId });
export const depositedManifestSchema = z
  .object({ manifestId, watermark_id: watermarkGrantSchema.shape.id })
  .meta({ id: 'DepositedManifest' });

// --- platforms' signing certificates ----------------------------------------------------------------

export const registerSigningCertificateSchema = z
  .strictObject({
    platform_name: platformName.optional(),
    certificate_pem: z
      .string()
      .min(1)
      .max(16 * 1024),
  })
  .meta({ id: 'RegisterSigningCertificate' });

export const signingCertificateSchema = z
  .object({
    certificate_id: uuid,
    platform_name: platformName,
    subject: z.string(),
    issuer: z.string(),
    is_ca: z.boolean(),
    fingerprint_sha256: z.string().regex(/^[0-9a-f]{64}$/),
    not_before: z.string(),
    not_after: z.string(),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
  })
  .meta({ id: 'SigningCertificate' });
export type SigningCertificate = z.infer<typeof signingCertificateSchema>;

export const signingCertificateListSchema = z
  .object({ certificates: z.array(signingCertificateSchema) })
  .meta({ id: 'SigningCertificateList' });
export const signingCertificateListQuerySchema = z.strictObject({ platform_name: platformName.optional() });
export const signingCertificateParamsSchema = z.strictObject({ certificate_id: uuid });
