import { type KeyObject, sign as signWithKey, X509Certificate } from 'node:crypto';
import type { AuditEntry } from '../audit.js';
import { signAsset } from '../provenance/c2pa.js';
import { readCredentials } from '../provenance/credentials.js';
import { authorizationReport, checkAssertionReceipt, credentialsReport, isApproval, settleCredentials } from '../provenance/judgement.js';
import {
  AUTHORIZATION_ASSERTION_LABEL,
  type AuthorizationAssertion,
  authorizationAssertionBytes,
  type OfflineProvenanceVerdict,
  PROVENANCE_MIME_TYPES,
  type ProvenanceMimeType,
  type ProvenanceVerification,
  TRAINED_ALGORITHMIC_MEDIA,
} from '../provenance.js';
import type { AuditReceipt } from '../routes/origin/audit.js';
import { type Checkpoint, openNote, parseCheckpointText, parseNoteVerifierKey, parseTlogProof, TlogFormatError } from '../tlog.js';

/**
 * `@vip/shared-schema/client/provenance` (Node only: it runs c2pa-rs in WASM and signs with
 * node:crypto): a platform writes Content Credentials that carry the gate's approval into the audio
 * it synthesized, and anyone verifies such a file without the service (docs/INTEGRATION.md,
 * "Content Credentials").
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

// --- verifying a file offline ------------------------------------------------------------------------

export interface OfflineVerifyOptions {
  /** The log's signed-note verifier key (`GET /tlog/vkey`), kept from a source you trust. */
  verifierKey: string;
  /** The log's origin line; the verifier key's name when absent. */
  origin?: string;
  /** A signed checkpoint of the log you saved earlier (`GET /tlog/checkpoint`), to compare the receipt's with. */
  checkpoint?: string;
  /**
   * PEM CA certificates of the platform whose signatures you trust; without them no signer is
   * trusted. They say whom you trust, not which platform registered them: `signer.registered_platform`
   * stays null offline.
   */
  trustAnchors?: string;
}

/**
 * How the receipt's checkpoint stands to the saved one. `same`: the same tree. `newer` / `older`:
 * a larger / smaller tree; offline nothing proves the two consistent (that takes the log's tiles,
 * which only the service or a mirror of them holds). `forked`: the same size with another root, two
 * signed views of one log that cannot both be true.
 */
export type CheckpointRelation = 'same' | 'newer' | 'older' | 'forked';

export interface OfflineVerification {
  verdict: OfflineProvenanceVerdict;
  credentials: ProvenanceVerification['credentials'];
  authorization: Omit<ProvenanceVerification['authorization'], 'redeemed' | 'consent_standing' | 'license_standing'> & {
    /** The receipt's checkpoint against the saved one; null without a saved checkpoint or a verified receipt. */
    checkpoint: { size: number; relation: CheckpointRelation } | null;
  };
  /** What only the service tells: the token's redemption, consent and licence today, the voice in the file. */
  not_checked: readonly ['redemption', 'consent_and_license_today', 'voice'];
}

const NOT_CHECKED_OFFLINE = ['redemption', 'consent_and_license_today', 'voice'] as const;

/**
 * Judges a file without calling the service: its C2PA credentials (c2pa-rs, your trust anchors),
 * the authorization assertion (the shared schema), and its receipt against the log key you saved,
 * with the verdicts of `POST /api/v1/provenance/verify` that need no registry or speaker model.
 * `authorized` here means: intact, signed under one of your anchors, and the log's approval of
 * exactly this check, voice, platform and use. Throws on a file whose manifest cannot be parsed,
 * and a TlogFormatError on a verifier key or saved checkpoint that does not hold.
 */
export async function verifyFile(audio: Uint8Array, mime: ProvenanceMimeType, options: OfflineVerifyOptions): Promise<OfflineVerification> {
  if (!PROVENANCE_MIME_TYPES.includes(mime)) throw new TypeError(`Content Credentials are read from ${PROVENANCE_MIME_TYPES.join(', ')}`);
  const saved = options.checkpoint === undefined ? null : await savedCheckpoint(options);
  const credentials = await readCredentials(audio, mime, options.trustAnchors ? { trustAnchors: options.trustAnchors } : {});
  const { redeemed, consent_standing, license_standing, ...authorization } = authorizationReport(credentials);
  const result: OfflineVerification = {
    verdict: 'no_credentials',
    credentials: credentialsReport(credentials),
    authorization: { ...authorization, checkpoint: null },
    not_checked: NOT_CHECKED_OFFLINE,
  };
  const verdict = (value: OfflineProvenanceVerdict) => ({ ...result, verdict: value });

  const settled = settleCredentials(credentials);
  if (settled.verdict) return verdict(settled.verdict);
  const { verified, problems } = await checkAssertionReceipt(settled.assertion, options.verifierKey, { origin: options.origin });
  result.authorization.problems = problems;
  if (!verified) return verdict('receipt_invalid');
  if (saved) {
    const relation = relationOf(verified.checkpoint, saved);
    result.authorization.checkpoint = { size: verified.checkpoint.size, relation };
    if (relation === 'forked') {
      result.authorization.problems = ["the receipt's checkpoint and the saved one are of the same size with different roots"];
      return verdict('receipt_invalid');
    }
  }
  result.authorization.receipt_verified = true;
  result.authorization.approved = isApproval(verified.entry);
  if (!result.authorization.approved) return verdict('not_approved');
  if (settled.state !== 'trusted') return verdict('signer_not_registered');
  return verdict('authorized');
}

async function savedCheckpoint(options: OfflineVerifyOptions): Promise<Checkpoint> {
  const verifier = await parseNoteVerifierKey(options.verifierKey);
  const checkpoint = parseCheckpointText(await openNote(options.checkpoint!, verifier));
  const origin = options.origin ?? verifier.name;
  if (checkpoint.origin !== origin) throw new TlogFormatError(`the saved checkpoint is of log ${checkpoint.origin}, not ${origin}`);
  return checkpoint;
}

function relationOf(receipt: Checkpoint, saved: Checkpoint): CheckpointRelation {
  if (receipt.size > saved.size) return 'newer';
  if (receipt.size < saved.size) return 'older';
  return receipt.rootHash.every((byte, at) => byte === saved.rootHash[at]) ? 'same' : 'forked';
}
