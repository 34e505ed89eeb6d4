import { defineRoute } from '../../contract.js';
import { AUDIO_PROBLEM_CODES } from '../../problem.js';
import {
  provenanceVerificationSchema,
  registerSigningCertificateSchema,
  signingCertificateListQuerySchema,
  signingCertificateListSchema,
  signingCertificateParamsSchema,
  signingCertificateSchema,
} from '../../provenance.js';

/** Content Credentials (docs/CONTRACT.md#content-credentials): verifying a file, and the certificates platforms sign with. */

const callerProblems = ['authentication_required', 'invalid_credentials', 'invalid_token'] as const;

export const verifyProvenanceRoute = defineRoute({
  method: 'post',
  path: '/api/v1/provenance/verify',
  operationId: 'verifyProvenance',
  summary:
    'Judge one audio file (WAV, MP3 or M4A): its C2PA Content Credentials, the authorization they carry (receipt, logged decision, redemption, consent and licence today) and the voice in it against the voice named; one verdict. Public with a per-IP limit, or with a key or token for a higher one. The file is not kept',
  tag: 'provenance',
  auth: ['none', 'apiKey', 'bearer'],
  multipart: { audio: { description: 'the file to judge (WAV, MP3 or M4A)', file: true, required: true } },
  success: { status: 200, description: 'The verdict and what it rests on', schema: provenanceVerificationSchema },
  problems: [
    ...callerProblems,
    ...AUDIO_PROBLEM_CODES,
    'malformed_manifest',
    'unsupported_media_type',
    'validation_failed',
    'unavailable',
    'rate_limited',
  ],
  crossOrigin: true,
});

export const registerSigningCertificateRoute = defineRoute({
  method: 'post',
  path: '/api/v1/signing-certificates',
  operationId: 'registerSigningCertificate',
  summary:
    "Register a certificate a platform signs Content Credentials under: the CA its signing certificates are issued by, or a signing (leaf) certificate itself (the platform's key for itself, or an administrator naming the platform); files whose signer chains to the CA, or is the leaf, verify as that platform's",
  tag: 'provenance',
  auth: ['apiKey', 'bearer'],
  body: registerSigningCertificateSchema,
  success: { status: 201, description: 'Registered', schema: signingCertificateSchema },
  problems: [...callerProblems, 'forbidden', 'platform_mismatch', 'not_found', 'conflict', 'validation_failed', 'malformed_json'],
});

export const listSigningCertificatesRoute = defineRoute({
  method: 'get',
  path: '/api/v1/signing-certificates',
  operationId: 'listSigningCertificates',
  summary: "A platform's signing certificates, live and revoked, newest first (its key; an administrator names the platform)",
  tag: 'provenance',
  auth: ['apiKey', 'bearer'],
  query: signingCertificateListQuerySchema,
  success: { status: 200, description: 'Certificates', schema: signingCertificateListSchema },
  problems: [...callerProblems, 'forbidden', 'platform_mismatch', 'not_found', 'validation_failed'],
});

export const revokeSigningCertificateRoute = defineRoute({
  method: 'post',
  path: '/api/v1/signing-certificates/{certificate_id}/revoke',
  operationId: 'revokeSigningCertificate',
  summary:
    'Revoke a signing certificate: from now on no file signed under it verifies as the platform’s (files carry no trusted time, so files signed before are refused too)',
  tag: 'provenance',
  auth: ['apiKey', 'bearer'],
  params: signingCertificateParamsSchema,
  success: { status: 200, description: 'Revoked (again: unchanged)', schema: signingCertificateSchema },
  problems: [...callerProblems, 'forbidden', 'not_found', 'validation_failed'],
});
