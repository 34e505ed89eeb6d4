import { z } from 'zod';
import { canonicalJson } from './canonical.js';
import { uuid } from './common.js';
import { INTENDED_USES } from './enums.js';
import { platformName } from './identity.js';
import { auditReceiptSchema } from './routes/origin/audit.js';
import { TLOG_PROOF_HEADER } from './tlog.js';

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
  'no_credentials_protected_voice',
  'no_credentials',
  'altered',
  'credentials_invalid',
  'no_authorization_protected_voice',
  'no_authorization',
  'authorization_malformed',
  'receipt_invalid',
  'not_approved',
  'signer_not_registered',
  'signer_not_the_platform',
  'voice_mismatch',
  'authorization_revoked_since',
  'not_redeemed',
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
] as const satisfies readonly ProvenanceVerdict[];
export type OfflineProvenanceVerdict = Exclude<ProvenanceVerdict, (typeof SERVICE_ONLY_VERDICTS)[number]>;

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
  receipt_verified: z.boolean(),
  approved: z.boolean(),
  redeemed: z.boolean(),
  consent_standing: z.boolean(),
  license_standing: z.boolean(),
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

export const provenanceVerificationSchema = z
  .object({
    verdict: z.enum(PROVENANCE_VERDICTS),
    check_id: uuid.describe('the audit entry of this verification'),
    credentials: provenanceCredentialsSchema,
    authorization: provenanceAuthorizationSchema,
    voice: provenanceVoiceSchema,
  })
  .meta({ id: 'ProvenanceVerification' });
export type ProvenanceVerification = z.infer<typeof provenanceVerificationSchema>;

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
