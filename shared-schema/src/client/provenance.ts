import { type KeyObject, sign as signWithKey, X509Certificate } from 'node:crypto';
import type { AuditEntry } from '../audit.js';
import { signAsset } from '../provenance/c2pa.js';
import {
  AUTHORIZATION_ASSERTION_LABEL,
  type AuthorizationAssertion,
  authorizationAssertionBytes,
  PROVENANCE_MIME_TYPES,
  type ProvenanceMimeType,
  TRAINED_ALGORITHMIC_MEDIA,
} from '../provenance.js';
import type { AuditReceipt } from '../routes/origin/audit.js';
import { parseCheckpointText, parseTlogProof, TlogFormatError } from '../tlog.js';

/**
 * `@vip/shared-schema/client/provenance` (Node only: it runs c2pa-rs in WASM and signs with
 * node:crypto): a platform writes Content Credentials that carry the gate's approval into the audio
 * it synthesized (docs/INTEGRATION.md, "Content Credentials").
 */

/** The platform's signing credentials: its certificate chain (leaf first) and the leaf's private key. */
export interface PlatformSigner {
  /** PEM texts or DER bytes, leaf first; the CA the platform registered with the service may follow. */
  certificateChain: readonly (string | Uint8Array)[];
  /** ECDSA P-256 or Ed25519; used in this process only. */
  privateKey: KeyObject;
}

export interface EmbedAuthorizationInput {
  check_id: string;
  /** `GET /api/v1/protect/audit-log/{check_id}/receipt` of the approval. */
  receipt: AuditReceipt;
  /** Variant B: the approval token the gate issued. */
  approval_token?: string;
}

export interface EmbedOptions {
  /** The TTS engine, named in the `c2pa.created` action. */
  softwareAgent?: string;
  title?: string;
}

const CLAIM_GENERATOR = { name: 'vip-client', version: '0.1.0' };

const toDer = (certificate: string | Uint8Array): Uint8Array =>
  typeof certificate === 'string' ? new Uint8Array(new X509Certificate(certificate).raw) : certificate;

/**
 * The authorization assertion for an approval, built from its receipt: the voice, platform, use and
 * decision time are read off the logged entry, so the file says exactly what the log says.
 */
export function authorizationAssertionOf(input: EmbedAuthorizationInput): AuthorizationAssertion {
  const { check_id, receipt } = input;
  if (receipt.check_id.toLowerCase() !== check_id.toLowerCase()) throw new TlogFormatError('the receipt is for another check');
  const proof = parseTlogProof(receipt.proof);
  const checkpointBody = proof.checkpoint.slice(0, proof.checkpoint.indexOf('\n\n') + 1);
  const { origin } = parseCheckpointText(checkpointBody);
  let entry: Partial<AuditEntry>;
  try {
    entry = JSON.parse(receipt.leaf) as Partial<AuditEntry>;
  } catch {
    throw new TlogFormatError('the receipt leaf is not JSON');
  }
  if (entry.kind !== 'gate.decision' || entry.decision !== 'allow' || entry.check_id !== check_id.toLowerCase()) {
    throw new TlogFormatError('the receipt is not of an approved gate decision for this check');
  }
  return {
    check_id: entry.check_id,
    voice_id: entry.voice_id as string,
    platform_name: entry.platform_name as string,
    intended_use: entry.intended_use as AuthorizationAssertion['intended_use'],
    decided_at: entry.decided_at as string,
    log_origin: origin,
    receipt: { check_id: receipt.check_id, index: receipt.index, leaf: receipt.leaf, proof: receipt.proof },
    ...(input.approval_token ? { approval_token: input.approval_token } : {}),
  };
}

/**
 * Writes a C2PA manifest into `audio` (WAV, MP3 or M4A): a `c2pa.actions` entry saying a trained
 * model created it, and the authorization assertion; signed with the platform's key. Returns the
 * signed file. Throws a TlogFormatError when the receipt is not of an approval for `check_id`.
 */
export async function embedAuthorization(
  audio: Uint8Array,
  mime: ProvenanceMimeType,
  input: EmbedAuthorizationInput,
  signer: PlatformSigner,
  options: EmbedOptions = {},
): Promise<Uint8Array> {
  if (!PROVENANCE_MIME_TYPES.includes(mime))
    throw new TypeError(`Content Credentials are written into ${PROVENANCE_MIME_TYPES.join(', ')}`);
  const assertion = authorizationAssertionOf(input);
  const keyType = signer.privateKey.asymmetricKeyType;
  const isEd25519 = keyType === 'ed25519';
  if (!isEd25519 && !(keyType === 'ec' && signer.privateKey.asymmetricKeyDetails?.namedCurve === 'prime256v1')) {
    throw new TypeError('the signing key is ECDSA P-256 or Ed25519');
  }
  return signAsset(
    audio,
    mime,
    {
      claimGenerator: CLAIM_GENERATOR,
      title: options.title,
      assertions: [
        {
          label: 'c2pa.actions.v2',
          data: {
            actions: [
              {
                action: 'c2pa.created',
                digitalSourceType: TRAINED_ALGORITHMIC_MEDIA,
                description: 'Synthesized by a text-to-speech engine after the voice owner’s authorization',
                ...(options.softwareAgent ? { softwareAgent: { name: options.softwareAgent } } : {}),
              },
            ],
          },
        },
        {
          label: AUTHORIZATION_ASSERTION_LABEL,
          data: JSON.parse(new TextDecoder().decode(authorizationAssertionBytes(assertion))),
          kind: 'Json',
        },
      ],
    },
    {
      certificateChain: signer.certificateChain.map(toDer),
      algorithm: isEd25519 ? 'ed25519' : 'es256',
      sign: (data) =>
        isEd25519
          ? signWithKey(null, data, signer.privateKey)
          : signWithKey('sha256', data, { key: signer.privateKey, dsaEncoding: 'ieee-p1363' }),
    },
  );
}
