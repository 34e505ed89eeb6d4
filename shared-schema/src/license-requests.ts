import { z } from 'zod';
import { cursor, isoTimestamp, uuid } from './common.js';
import { INTENDED_USES, LICENSE_REQUEST_STATUSES } from './enums.js';
import { licenseTermsInput, licenseTermsOutput } from './license-terms.js';
import { licenseScopes } from './licenses.js';
import { platformName } from './platforms.js';

/** A platform's request for a licence of a voice, and the owner's answer (docs/CONTRACT.md#closing-the-loop-receipts-pages). */

export const LICENSE_REQUEST_MESSAGE_MAX = 1000;
export const LICENSE_REQUEST_REASON_MAX = 1000;
export const LICENSE_REQUEST_LIST_MAX_LIMIT = 100;

export const createLicenseRequestBodySchema = z
  .strictObject({
    platform_name: platformName.describe("the caller's platform, exactly as its API key is registered"),
    scopes: licenseScopes.describe('intended uses the platform asks to be licensed for'),
    expires_at: isoTimestamp.describe('the expiry asked for: in the future, at most ten years ahead'),
    message: z.string().max(LICENSE_REQUEST_MESSAGE_MAX).optional().describe('a note to the owner'),
    ...licenseTermsInput,
  })
  .meta({ id: 'CreateLicenseRequestBody' });

/**
 * The owner approves the terms the request showed: its description, representation and
 * compensation become the licence's as they are. The owner may narrow the scopes or change the expiry.
 */
export const approveLicenseRequestBodySchema = z
  .strictObject({
    expires_at: isoTimestamp.optional().describe("the licence's expiry, if not the one asked for"),
    scopes: licenseScopes.optional().describe('the uses licensed, if not the ones asked for'),
  })
  .meta({ id: 'ApproveLicenseRequestBody' });

export const declineLicenseRequestBodySchema = z
  .strictObject({ reason: z.string().max(LICENSE_REQUEST_REASON_MAX).optional().describe('told to the platform') })
  .meta({ id: 'DeclineLicenseRequestBody' });

export const licenseRequestSchema = z
  .object({
    request_id: uuid,
    voice_id: uuid,
    platform_name: z.string(),
    scopes: z.array(z.enum(INTENDED_USES)),
    expires_at: isoTimestamp,
    message: z.string().nullable(),
    ...licenseTermsOutput,
    status: z.enum(LICENSE_REQUEST_STATUSES),
    created_at: isoTimestamp,
    answered_at: isoTimestamp.nullable().describe('when it was approved, declined or closed'),
    license_id: uuid.nullable().describe('the licence an approval created'),
    decline_reason: z.string().nullable(),
    closed_reason: z.enum(['consent_withdrawn', 'voice_deleted']).nullable(),
  })
  .meta({ id: 'LicenseRequest' });
export type LicenseRequest = z.infer<typeof licenseRequestSchema>;

export const createdLicenseRequestSchema = licenseRequestSchema
  .pick({
    request_id: true,
    voice_id: true,
    platform_name: true,
    scopes: true,
    expires_at: true,
    description: true,
    represented_by: true,
    compensation: true,
    created_at: true,
  })
  .extend({ status: z.literal('pending') })
  .meta({ id: 'CreatedLicenseRequest' });

export const licenseRequestListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(LICENSE_REQUEST_LIST_MAX_LIMIT).default(50),
  cursor: cursor.optional(),
  status: z.enum(LICENSE_REQUEST_STATUSES).optional(),
});

export const licenseRequestListSchema = z
  .object({ requests: z.array(licenseRequestSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'LicenseRequestList' });

export const approvedLicenseRequestSchema = z
  .object({ request_id: uuid, status: z.literal('approved'), license_id: uuid })
  .meta({ id: 'ApprovedLicenseRequest' });
export const declinedLicenseRequestSchema = z
  .object({ request_id: uuid, status: z.literal('declined') })
  .meta({ id: 'DeclinedLicenseRequest' });

export const voiceLicenseRequestParamsSchema = z.strictObject({ voice_id: uuid, request_id: uuid });
export const licenseRequestParamsSchema = z.strictObject({ request_id: uuid });
