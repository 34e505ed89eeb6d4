import { type KeyObject, sign as signWithKey, X509Certificate } from 'node:crypto';
import type { AuditEntry } from '../audit.js';
import { signAsset } from '../provenance/c2pa.js';
import { readCredentials } from '../provenance/credentials.js';
import {
  authorizationReport,
  checkAssertionReceipt,
  checked,
  credentialsReport,
  isApproval,
  noneChecked,
  settleCredentials,
} from '../provenance/judgement.js';
import {
  checkedWatermarkGrant,
  readWavWatermark,
  SOFT_BINDING_LABEL,
  type SoftBindingBlock,
  softBindingAssertion,
  WATERMARKED_ACTION,
  watermarkWav,
} from '../provenance/watermarking.js';
import {
  AUTHORIZATION_ASSERTION_LABEL,
  type AuthorizationAssertion,
  authorizationAssertionBytes,
  type OfflineProvenanceVerdict,
  PROVENANCE_MIME_TYPES,
  type ProvenanceCheck,
  type ProvenanceMimeType,
  type ProvenanceVerification,
  TRAINED_ALGORITHMIC_MEDIA,
} from '../provenance.js';
import type { AuditReceipt } from '../routes/origin/audit.js';
import { type Checkpoint, openNote, parseCheckpointText, parseNoteVerifierKey, parseTlogProof, TlogFormatError } from '../tlog.js';
import type { WatermarkDetection, WatermarkGrant } from '../watermark/index.js';

export {
  type PcmChannels,
  readWatermarkPcm,
  readWavWatermark,
  SOFT_BINDING_LABEL,
  WATERMARKED_ACTION,
  watermarkPcm,
  watermarkWav,
} from '../provenance/watermarking.js';
export { WATERMARK_ALGORITHM, WATERMARK_FRAME_SECONDS, type WatermarkDetection, type WatermarkGrant } from '../watermark/index.js';

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
  /**
   * The redeem answer's `watermark`: with it, a WAV is marked with the grant's id before it is
   * signed, and the manifest gains a `c2pa.soft-binding` assertion and a `c2pa.watermarked` action.
   * MP3 and M4A are not decoded here: their platform marks the PCM with `watermarkPcm` before it
   * encodes, and says so with `options.markedPcmSeconds`, so that their manifest declares the mark.
   */
  watermark?: WatermarkGrant;
}

export interface EmbedOptions {
  /** The TTS engine, named in the `c2pa.created` action. */
  softwareAgent?: string;
  title?: string;
  /**
   * MP3 and M4A with `input.watermark` only: the audio was marked as PCM (`watermarkPcm` with that
   * grant) before it was encoded, over this many seconds; the soft binding's time span.
   */
  markedPcmSeconds?: number;
}

const CLAIM_GENERATOR = { name: 'vip-client', version: '0.1.0' };

const toDer = (certificate: string | Uint8Array): Uint8Array =>
  typeof certificate === 'string' ? new Uint8Array(new X509Certificate(certificate).raw) : certificate;

/**
 * The authorization assertion for an approval, built from its receipt: the voice, platform, use,
 * decision time and licence terms' hash are read off the logged entry, so the file says exactly
 * what the log says.
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
    ...(entry.license_terms_sha256 === undefined ? {} : { license_terms_sha256: entry.license_terms_sha256 }),
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
  const grant = input.watermark === undefined ? undefined : checkedWatermarkGrant(input.watermark);
  const declaresEncodedMark = options.markedPcmSeconds !== undefined;
  if (declaresEncodedMark && (!grant || mime === 'audio/wav' || !(options.markedPcmSeconds! > 0))) {
    throw new TypeError('markedPcmSeconds declares the mark of MP3 or M4A whose PCM was marked with input.watermark: a duration above 0');
  }
  if (grant && mime !== 'audio/wav' && !declaresEncodedMark) {
    throw new TypeError('only audio/wav is marked here: mark the PCM with watermarkPcm before encoding, then pass markedPcmSeconds');
  }
  const keyType = signer.privateKey.asymmetricKeyType;
  const isEd25519 = keyType === 'ed25519';
  if (!isEd25519 && !(keyType === 'ec' && signer.privateKey.asymmetricKeyDetails?.namedCurve === 'prime256v1')) {
    throw new TypeError('the signing key is ECDSA P-256 or Ed25519');
  }
  // WAV is marked here; an encoded file was marked as PCM by its platform, and only declared here.
  let signedAudio = audio;
  let softBinding: ReturnType<typeof softBindingAssertion> | undefined;
  if (grant && declaresEncodedMark) softBinding = softBindingAssertion(grant, options.markedPcmSeconds! * 1000);
  else if (grant) ({ wav: signedAudio, softBinding } = watermarkWav(audio, grant));
  return signAsset(
    signedAudio,
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
              ...(softBinding
                ? [{ action: WATERMARKED_ACTION, description: 'An inaudible watermark carrying the authorization’s reference' }]
                : []),
            ],
          },
        },
        {
          label: AUTHORIZATION_ASSERTION_LABEL,
          data: JSON.parse(new TextDecoder().decode(authorizationAssertionBytes(assertion))),
          kind: 'Json',
        },
        ...(softBinding ? [{ label: SOFT_BINDING_LABEL, data: softBinding }] : []),
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
  /**
   * What the audio watermark says, beside the credentials: it never changes the verdict, since a
   * mark is a reference that only the service resolves to an authorization (and anyone can write
   * one: the algorithm's key is public).
   */
  watermark: OfflineWatermarkReport;
  /**
   * The checks this verification did not run (their members are null). Never checked offline, since
   * only the service tells them: the signer's platform, the voice in the file, consent and licence
   * today, the token's redemption, the protected voices it sounds like.
   */
  not_checked: ProvenanceCheck[];
}

export interface OfflineWatermarkReport {
  /** Whether the audio was searched for a mark: offline in PCM and float WAV only (decode other formats and call readWatermarkPcm). */
  read: boolean;
  found: boolean;
  /** The id the mark carries; `POST /api/v1/provenance/verify` or `GET /api/v1/provenance/matches/byBinding` resolve it. */
  id: string | null;
  /** The id the manifest's `c2pa.soft-binding` assertion of our algorithm names; null without one (or without credentials). */
  soft_binding_id: string | null;
  /** Whether the mark read and the soft binding name the same id; null when either is missing. */
  agrees_with_soft_binding: boolean | null;
}

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
    watermark: watermarkReport(audio, mime, credentials?.watermark_soft_bindings ?? []),
    not_checked: noneChecked(),
  };
  const verdict = (value: OfflineProvenanceVerdict) => ({ ...result, verdict: value });

  const settled = settleCredentials(credentials);
  if (settled.verdict) return verdict(settled.verdict);
  const { verified, problems } = await checkAssertionReceipt(settled.assertion, options.verifierKey, { origin: options.origin });
  checked(result, 'receipt');
  result.authorization.problems = problems;
  result.authorization.receipt_verified = false;
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
  checked(result, 'approval');
  result.authorization.approved = isApproval(verified.entry);
  if (!result.authorization.approved) return verdict('not_approved');
  if (settled.state !== 'trusted') return verdict('signer_not_registered');
  return verdict('authorized');
}

function watermarkReport(audio: Uint8Array, mime: ProvenanceMimeType, softBindings: readonly SoftBindingBlock[]): OfflineWatermarkReport {
  const softBindingId = softBindings[0]?.value ?? null;
  let detection: WatermarkDetection | null = null;
  if (mime === 'audio/wav') {
    try {
      detection = readWavWatermark(audio);
    } catch (error) {
      // A WAV of another encoding (A-law, ADPCM): its credentials are judged all the same, its mark is not read here.
      if (!(error instanceof TypeError)) throw error;
    }
  }
  const id = detection?.found ? (detection.id ?? null) : null;
  return {
    read: detection !== null,
    found: detection?.found ?? false,
    id,
    soft_binding_id: softBindingId,
    agrees_with_soft_binding: id === null || softBindingId === null ? null : softBindings.some((block) => block.value === id),
  };
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
