import { z } from 'zod';
import { canonicalJson, sha256Hex } from './canonical.js';
import { hexDigest } from './common.js';
import { type IntendedUse, LICENSE_DESCRIPTION_SOURCES, LICENSE_REPRESENTATIONS, type LicenseDescriptionSource } from './enums.js';

/**
 * A licence's terms (docs/CONTRACT.md#licence-terms): what the voice may be used for, in words
 * (California AB 2602 voids a digital-replica clause without a "reasonably specific description of
 * the intended uses"), who represented the owner, and the compensation, beside the platform, the
 * scopes and the expiry the licence already had. Said once here for licences, licence requests, the
 * edge index and the audit log.
 */

/** Longest `description`, in characters: a specific description, not a contract's full text. */
export const LICENSE_DESCRIPTION_MAX = 2000;
/** Longest `compensation`, in characters. */
export const LICENSE_COMPENSATION_MAX = 1000;

/** The terms a licence or a licence request is given, as a body states them. */
export const licenseTermsInput = {
  description: z
    .string()
    .trim()
    .min(1)
    .max(LICENSE_DESCRIPTION_MAX)
    .describe('a reasonably specific description of the intended uses (required, 1 to 2000 characters)'),
  represented_by: z
    .enum(LICENSE_REPRESENTATIONS)
    .default('none')
    .describe("who represented the voice's owner in agreeing the terms: none (the default), counsel or union"),
  compensation: z.string().trim().min(1).max(LICENSE_COMPENSATION_MAX).optional().describe('what the owner is paid, in words (optional)'),
};

/** The terms as every answer shows them. */
export const licenseTermsOutput = {
  description: z.string(),
  description_source: z.enum(LICENSE_DESCRIPTION_SOURCES),
  represented_by: z.enum(LICENSE_REPRESENTATIONS),
  compensation: z.string().nullable(),
};

/**
 * The fields of a licence its canonical terms are made of, in the licence answer's names: the
 * licence, the voice and the platform it binds, what it allows and until when, and its terms. Not
 * its status, which changes without the terms changing (a revocation, an expiry).
 */
export interface LicenseTerms {
  license_id: string;
  voice_id: string;
  platform_name: string;
  scopes: readonly IntendedUse[];
  expires_at: string;
  description: string;
  description_source: LicenseDescriptionSource;
  represented_by: (typeof LICENSE_REPRESENTATIONS)[number];
  compensation: string | null;
}

/**
 * The canonical terms: the RFC 8785 canonical JSON (canonical.ts) of exactly the LicenseTerms
 * fields, copied from a licence answer as it shows them (scopes in its order, `compensation` null
 * when none was stated). Anything else the answer carries is left out.
 */
export function canonicalLicenseTerms(licence: LicenseTerms): string {
  const terms: LicenseTerms = {
    license_id: licence.license_id.toLowerCase(),
    voice_id: licence.voice_id.toLowerCase(),
    platform_name: licence.platform_name,
    scopes: licence.scopes,
    expires_at: licence.expires_at,
    description: licence.description,
    description_source: licence.description_source,
    represented_by: licence.represented_by,
    compensation: licence.compensation,
  };
  return canonicalJson(terms);
}

/** `license_terms_sha256`: the SHA-256 (lower-case hex) of the UTF-8 bytes of the canonical terms. */
export const licenseTermsSha256 = (licence: LicenseTerms): Promise<string> => sha256Hex(canonicalLicenseTerms(licence));

/** The hash as it appears in answers, the edge index, audit entries and authorization assertions. */
export const licenseTermsSha256Schema = hexDigest.describe("SHA-256 of the licence's canonical terms (docs/CONTRACT.md#licence-terms)");
