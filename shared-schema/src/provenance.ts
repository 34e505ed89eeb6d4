import { z } from 'zod';
import { canonicalJson } from './canonical.js';
import { uuid } from './common.js';
import { INTENDED_USES } from './enums.js';
import { platformName } from './identity.js';
import { auditReceiptSchema } from './routes/origin-tlog.js';
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
