import { defineRoute } from '../../contract.js';
import { AUDIO_PROBLEM_CODES } from '../../problem.js';
import {
  depositedManifestSchema,
  manifestParamsSchema,
  provenanceVerificationSchema,
  registerSigningCertificateSchema,
  signingCertificateListQuerySchema,
  signingCertificateListSchema,
  signingCertificateParamsSchema,
  signingCertificateSchema,
  softBindingAlgListSchema,
  softBindingContentQuerySchema,
  softBindingQueryResultSchema,
  softBindingQuerySchema,
} from '../../provenance.js';

/** Content Credentials (docs/CONTRACT.md#content-credentials): verifying a file, and the certificates platforms sign with. */

export const verifyProvenanceRoute = defineRoute({
  method: 'post',
  path: '/api/v1/provenance/verify',
  operationId: 'verifyProvenance',
  summary:
    'Judge one audio file (any format enrollment takes): its C2PA Content Credentials (WAV, MP3, M4A), its audio watermark, the authorization they carry (receipt, logged decision, redemption, consent and licence today) and the voice in it against the voice named; one verdict. Public with a per-IP limit, or with a key or token for a higher one. The file is not kept',
  tag: 'provenance',
  auth: ['none', 'apiKey', 'bearer'],
  multipart: { audio: { description: 'the file to judge (WAV, FLAC, MP3, Ogg Opus/Vorbis, WebM or M4A)', file: true, required: true } },
  success: { status: 200, description: 'The verdict and what it rests on', schema: provenanceVerificationSchema },
  // Optional credentials, as the lookups below (lookupProblems says when they are still required).
  problems: [
    'authentication_required',
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
  problems: ['forbidden', 'platform_mismatch', 'not_found', 'conflict', 'validation_failed', 'malformed_json'],
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
  problems: ['forbidden', 'platform_mismatch', 'not_found', 'validation_failed'],
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
  problems: ['forbidden', 'not_found', 'validation_failed'],
});

// --- the C2PA soft-binding resolution API (docs/CONTRACT.md#the-soft-binding-resolution-api) ------

/**
 * Credentials are optional here; a request whose credentials cannot be read as either kind (an
 * `X-API-Key` header sent twice and no `Authorization`) is still `authentication_required`.
 */
const lookupProblems = ['authentication_required', 'validation_failed', 'rate_limited'] as const;

export const softBindingByBindingRoute = defineRoute({
  method: 'get',
  path: '/api/v1/provenance/matches/byBinding',
  operationId: 'queryByBinding',
  summary:
    'C2PA soft-binding resolution: the manifests (and, this service’s extension, the authorizations) a watermark id was issued for. Public with a per-IP limit, higher with a key or token; audited',
  tag: 'provenance',
  auth: ['none', 'apiKey', 'bearer'],
  query: softBindingQuerySchema,
  success: { status: 200, description: 'Zero or more matches', schema: softBindingQueryResultSchema },
  problems: [...lookupProblems],
  crossOrigin: true,
});

export const softBindingByContentRoute = defineRoute({
  method: 'post',
  path: '/api/v1/provenance/matches/byContent',
  operationId: 'queryByContent',
  summary:
    'C2PA soft-binding resolution by content: reads the audio watermark of an uploaded file (bounded windows; the file is not kept) and answers as byBinding. Public with a per-IP limit, higher with a key or token; audited',
  tag: 'provenance',
  auth: ['none', 'apiKey', 'bearer'],
  query: softBindingContentQuerySchema,
  multipart: { audio: { description: 'the audio to read (WAV, FLAC, MP3, Ogg Opus/Vorbis, WebM or M4A)', file: true, required: true } },
  success: { status: 200, description: 'Zero or more matches', schema: softBindingQueryResultSchema },
  problems: [...lookupProblems, ...AUDIO_PROBLEM_CODES, 'unsupported_media_type', 'unavailable'],
  crossOrigin: true,
});

export const softBindingAlgorithmsRoute = defineRoute({
  method: 'get',
  path: '/api/v1/provenance/services/supportedAlgorithms',
  operationId: 'getSupportedBindings',
  summary: 'The soft-binding algorithms this service resolves: its audio watermark',
  tag: 'provenance',
  auth: ['none'],
  success: { status: 200, description: 'The algorithms', schema: softBindingAlgListSchema },
  problems: [],
  crossOrigin: true,
});

export const depositManifestRoute = defineRoute({
  method: 'post',
  path: '/api/v1/provenance/manifests',
  operationId: 'depositManifest',
  summary:
    'Deposit the signed C2PA manifest store of a file the platform marked (its key only; the mark must have been issued to it; one per mark, at most limits.manifestStoreMaxBytes); byBinding and byContent then name it',
  tag: 'provenance',
  auth: ['apiKey'],
  multipart: {
    manifest: { description: 'the manifest store (application/c2pa, JUMBF)', file: true, required: true },
    watermark_id: { description: 'the id of the mark written into the file (the redeem answer’s watermark.id)', required: true },
  },
  success: { status: 201, description: 'Deposited', schema: depositedManifestSchema },
  // A Bearer token is read and refused (its key only): a bad one is invalid_token first.
  problems: [
    'invalid_token',
    'forbidden',
    'platform_mismatch',
    'not_found',
    'conflict',
    'payload_too_large',
    'malformed_manifest',
    'validation_failed',
    'unsupported_media_type',
  ],
});

export const manifestRoute = defineRoute({
  method: 'get',
  path: '/api/v1/provenance/manifests/{manifestId}',
  operationId: 'getManifest',
  summary: 'The manifest store a platform deposited for a marked file (application/c2pa), by the manifestId a match names',
  tag: 'provenance',
  auth: ['none', 'apiKey', 'bearer'],
  params: manifestParamsSchema,
  success: { status: 200, description: 'The manifest store', contentType: 'application/c2pa' },
  problems: [...lookupProblems, 'not_found'],
  crossOrigin: true,
});
