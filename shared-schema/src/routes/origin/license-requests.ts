import { defineRoute } from '../../contract.js';
import {
  approvedLicenseRequestSchema,
  approveLicenseRequestBodySchema,
  createdLicenseRequestSchema,
  createLicenseRequestBodySchema,
  declinedLicenseRequestSchema,
  declineLicenseRequestBodySchema,
  licenseRequestListQuerySchema,
  licenseRequestListSchema,
  licenseRequestParamsSchema,
  licenseRequestSchema,
  voiceLicenseRequestParamsSchema,
} from '../../license-requests.js';
import { registryVoiceParamsSchema } from '../../licenses.js';

/**
 * Licence requests (docs/CONTRACT.md#closing-the-loop-receipts-pages): a platform blocked with `no_license` asks the voice's owner,
 * who approves (a licence is created as `POST …/licenses` creates it) or declines.
 */

/** Another owner's voice, and another platform's request, answer 404 like missing ones. */
const ownerProblems = ['validation_failed', 'not_found'] as const;
const platformProblems = ['validation_failed', 'not_found'] as const;

export const requestLicenseRoute = defineRoute({
  method: 'post',
  path: '/api/v1/voices/{voice_id}/license-requests',
  operationId: 'requestLicense',
  summary: "Ask a voice's owner for a licence (platform API key); one pending request per voice and platform",
  tag: 'licenses',
  auth: ['apiKey'],
  params: registryVoiceParamsSchema,
  body: createLicenseRequestBodySchema,
  success: { status: 201, description: 'Request recorded; the owner is told (`license.requested`)', schema: createdLicenseRequestSchema },
  problems: [...platformProblems, 'invalid_token', 'forbidden', 'platform_mismatch', 'conflict', 'malformed_json', 'rate_limited'],
});

export const listLicenseRequestsRoute = defineRoute({
  method: 'get',
  path: '/api/v1/voices/{voice_id}/license-requests',
  operationId: 'listLicenseRequests',
  summary: "List the licence requests of one of the caller's voices, newest first",
  tag: 'licenses',
  auth: ['bearer'],
  params: registryVoiceParamsSchema,
  query: licenseRequestListQuerySchema,
  success: { status: 200, description: 'Requests, newest first', schema: licenseRequestListSchema },
  problems: ownerProblems,
});

export const approveLicenseRequestRoute = defineRoute({
  method: 'post',
  path: '/api/v1/voices/{voice_id}/license-requests/{request_id}/approve',
  operationId: 'approveLicenseRequest',
  summary:
    'Approve a pending request: a licence is created exactly as `POST …/licenses` creates it; its token goes to the platform in `license.granted`',
  tag: 'licenses',
  auth: ['bearer'],
  params: voiceLicenseRequestParamsSchema,
  body: approveLicenseRequestBodySchema,
  success: { status: 200, description: 'Approved', schema: approvedLicenseRequestSchema },
  problems: [...ownerProblems, 'conflict', 'malformed_json'],
});

export const declineLicenseRequestRoute = defineRoute({
  method: 'post',
  path: '/api/v1/voices/{voice_id}/license-requests/{request_id}/decline',
  operationId: 'declineLicenseRequest',
  summary: 'Decline a pending request; the platform is told (`license.request_declined`)',
  tag: 'licenses',
  auth: ['bearer'],
  params: voiceLicenseRequestParamsSchema,
  body: declineLicenseRequestBodySchema,
  success: { status: 200, description: 'Declined', schema: declinedLicenseRequestSchema },
  problems: [...ownerProblems, 'conflict', 'malformed_json'],
});

export const getLicenseRequestRoute = defineRoute({
  method: 'get',
  path: '/api/v1/license-requests/{request_id}',
  operationId: 'getLicenseRequest',
  summary: "Read one of the calling platform's licence requests",
  tag: 'licenses',
  auth: ['apiKey', 'bearer'],
  params: licenseRequestParamsSchema,
  success: { status: 200, description: 'The request', schema: licenseRequestSchema },
  problems: platformProblems,
});
