import { defineRoute } from '../../../contract.js';
import {
  createdLicenseSchema,
  createLicenseRequestSchema,
  licenseListSchema,
  licenseParamsSchema,
  licenseSchema,
  platformNameParamsSchema,
  registeredPlatformNameSchema,
  registryVoiceParamsSchema,
  renewLicenseRequestSchema,
  revokedLicenseSchema,
} from '../../../licenses.js';

/** Served by origin/src/registry/licenses/: a voice's licences, which the edge gate judges by, and the platform-name check made before licensing. */

/** Another owner's voice answers 404 like a missing one, so voice ids cannot be probed. */
const ownerProblems = ['validation_failed', 'not_found'] as const;

export const checkPlatformNameRoute = defineRoute({
  method: 'get',
  path: '/api/v1/platform-names/{platform_name}',
  operationId: 'checkPlatformName',
  summary:
    'Check that a platform is registered under this exact name (case and spaces count, as in the gate) before licensing it; answers the name and nothing else about the platform',
  tag: 'licenses',
  auth: ['bearer'],
  params: platformNameParamsSchema,
  success: { status: 200, description: 'A platform is registered under this exact name', schema: registeredPlatformNameSchema },
  problems: ['validation_failed', 'not_found'],
});

export const createLicenseRoute = defineRoute({
  method: 'post',
  path: '/api/v1/voices/{voice_id}/licenses',
  operationId: 'createLicense',
  summary: 'License a registered platform to synthesize the voice for some intended uses; the licence token is shown only here',
  tag: 'licenses',
  auth: ['bearer'],
  params: registryVoiceParamsSchema,
  body: createLicenseRequestSchema,
  success: { status: 201, description: 'Licence created', schema: createdLicenseSchema },
  problems: [...ownerProblems, 'malformed_json', 'voice_under_review'],
});

export const listLicensesRoute = defineRoute({
  method: 'get',
  path: '/api/v1/voices/{voice_id}/licenses',
  operationId: 'listLicenses',
  summary: "List a voice's licences, without their tokens",
  tag: 'licenses',
  auth: ['bearer'],
  params: registryVoiceParamsSchema,
  success: { status: 200, description: 'Licences, oldest first', schema: licenseListSchema },
  problems: ownerProblems,
});

export const renewLicenseRoute = defineRoute({
  method: 'post',
  path: '/api/v1/voices/{voice_id}/licenses/{license_id}/renew',
  operationId: 'renewLicense',
  summary: 'Set a new expiry on an active or expired licence (it becomes active again, same token); emits license.renewed',
  tag: 'licenses',
  auth: ['bearer'],
  params: licenseParamsSchema,
  body: renewLicenseRequestSchema,
  success: { status: 200, description: 'Licence renewed', schema: licenseSchema },
  problems: [...ownerProblems, 'malformed_json', 'conflict'],
});

export const revokeLicenseRoute = defineRoute({
  method: 'post',
  path: '/api/v1/voices/{voice_id}/licenses/{license_id}/revoke',
  operationId: 'revokeLicense',
  summary: 'Revoke a licence for good; the edge gate stops honouring it within a second; emits license.revoked',
  tag: 'licenses',
  auth: ['bearer'],
  params: licenseParamsSchema,
  success: { status: 200, description: 'Licence revoked (also when it already was)', schema: revokedLicenseSchema },
  problems: ownerProblems,
});
