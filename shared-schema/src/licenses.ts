import { z } from 'zod';
import { isoTimestamp, uuid } from './common.js';
import { INTENDED_USES, LICENSE_REPRESENTATIONS, LICENSE_STATES } from './enums.js';
import { licenseTermsInput, licenseTermsOutput, licenseTermsSha256Schema } from './license-terms.js';
import { platformName } from './platforms.js';

/** Licences of one voice (synthesis consent: synthesis-consent.ts; docs/CONTRACT.md#answers-to-the-specifications-gaps, docs/CONTRACT.md#contract-details). */

/** Licence tokens are `vlt_` + 32 random bytes (base64url); only their SHA-256 is stored and published. */
export const LICENSE_TOKEN_PREFIX = 'vlt_';

/** The longest licence term accepted at creation or renewal: ten years. */
export const LICENSE_MAX_TERM_MS = 10 * 366 * 24 * 60 * 60 * 1000;

/** Path parameters of a registry route that names a voice. */
export const registryVoiceParamsSchema = z.strictObject({ voice_id: uuid });
export const licenseParamsSchema = z.strictObject({ voice_id: uuid, license_id: uuid });

export const licenseScopes = z
  .array(z.enum(INTENDED_USES))
  .min(1)
  .refine((values) => new Set(values).size === values.length, 'scopes must not repeat an intended use');

export const createLicenseRequestSchema = z
  .strictObject({
    platform_name: platformName.describe('name of a registered platform, exactly as it sends platform_name to the gate'),
    scopes: licenseScopes.describe('intended uses the licence covers'),
    expires_at: isoTimestamp.describe('in the future, at most ten years ahead'),
    ...licenseTermsInput,
  })
  .meta({ id: 'CreateLicenseRequest' });

/**
 * A renewal keeps the licence's terms, or replaces them when it states a description: then the new
 * `description`, `represented_by` and `compensation` replace the old three together (an omitted
 * representation is `none`, an omitted compensation none), so no terms are half old, half new.
 */
export const renewLicenseRequestSchema = z
  .strictObject({
    expires_at: isoTimestamp.describe('the new expiry: in the future, at most ten years ahead'),
    description: licenseTermsInput.description
      .optional()
      .describe('new terms: a description of the intended uses; omitted, the terms stay'),
    represented_by: z
      .enum(LICENSE_REPRESENTATIONS)
      .optional()
      .describe('with a new description only: who represented the owner (none when omitted)'),
    compensation: licenseTermsInput.compensation.describe('with a new description only: what the owner is paid, in words'),
  })
  .refine((body) => body.description !== undefined || (body.represented_by === undefined && body.compensation === undefined), {
    message: 'new terms start with a description: represented_by and compensation replace the terms only together with it',
    path: ['description'],
  })
  .meta({ id: 'RenewLicenseRequest' });

export const licenseSchema = z
  .object({
    license_id: uuid,
    voice_id: uuid,
    platform_name: z.string(),
    scopes: z.array(z.enum(INTENDED_USES)),
    expires_at: isoTimestamp,
    status: z.enum(LICENSE_STATES),
    created_at: isoTimestamp,
    revoked_at: isoTimestamp.nullable(),
    ...licenseTermsOutput,
    license_terms_sha256: licenseTermsSha256Schema,
  })
  .meta({ id: 'License' });
export type License = z.infer<typeof licenseSchema>;

export const createdLicenseSchema = licenseSchema
  .extend({ license_token: z.string().startsWith(LICENSE_TOKEN_PREFIX).describe('shown only in this response') })
  .meta({ id: 'CreatedLicense' });

export const licenseListSchema = z.object({ licenses: z.array(licenseSchema) }).meta({ id: 'LicenseList' });
export const revokedLicenseSchema = z.object({ license_id: uuid, status: z.literal('revoked') }).meta({ id: 'RevokedLicense' });

export const licensingPageQuerySchema = z.strictObject({ voice_id: uuid });

export const platformNameParamsSchema = z.strictObject({ platform_name: platformName });
/** A registered platform as an owner may see it before licensing: its exact name, nothing else. */
export const registeredPlatformNameSchema = z.object({ platform_name: platformName }).meta({ id: 'RegisteredPlatformName' });
