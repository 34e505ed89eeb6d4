import { X509Certificate } from 'node:crypto';
import {
  AUTHORIZATION_ASSERTION_LABEL,
  type AuthorizationAssertion,
  authorizationAssertionSchema,
  type CredentialState,
  TRAINED_ALGORITHMIC_MEDIA,
} from '../provenance.js';
import { readManifestStore } from './c2pa.js';
import { credentialContainerOf, scanContainer } from './container-scan.js';
import { certificateFingerprint, signerCertificate } from './signer.js';
import { type SoftBindingBlock, watermarkSoftBindings } from './watermarking.js';

/**
 * A file's Content Credentials as c2pa-rs judges them, reduced to what a verifier of this service
 * acts on. Node only (c2pa-rs in WASM); the origin's verify route and the client's offline check
 * both read files through here.
 */

export interface ReadOptions {
  /**
   * PEM certificates the signer is trusted through: CA certificates its chain must reach (c2pa-rs
   * checks the chain), or the very leaf certificate it signed with (matched by SHA-256 fingerprint,
   * since c2pa-rs never trusts a leaf given as an anchor). Without any, no signer is trusted.
   */
  trustAnchors?: string;
}

/** Codes about trust alone: the manifest is intact, only its signer is unknown to the anchors given. */
const TRUST_CODES = new Set(['signingCredential.untrusted']);

export interface FileCredentials {
  state: CredentialState;
  /** Assertions in all the file's manifests (active and ingredients'). */
  assertion_count: number;
  /** Failure codes c2pa-rs reported for the active manifest (trust failures included). */
  failure_codes: string[];
  signer: { common_name: string | null; issuer: string | null; serial_number: string | null; algorithm: string | null };
  /** Whether the signer was trusted as a registered leaf certificate (rather than through a CA). */
  trusted_as_leaf: boolean;
  /** Whether a c2pa.created action says a trained model made the audio. */
  synthetic: boolean;
  /** The blocks of the active manifest's `c2pa.soft-binding` assertions of our watermark algorithm: the ids the file says it is marked with. */
  watermark_soft_bindings: SoftBindingBlock[];
  /** The authorization assertion: absent, present and valid, or present and not what the schema fixes. */
  authorization:
    | { present: false }
    | { present: true; valid: true; assertion: AuthorizationAssertion }
    | { present: true; valid: false; problems: string[] };
}

interface ManifestStoreJson {
  active_manifest?: string;
  manifests?: Record<
    string,
    {
      assertions?: { label: string; data: unknown }[];
      signature_info?: { alg?: string; issuer?: string; common_name?: string; cert_serial_number?: string };
    }
  >;
  validation_state?: string;
  validation_results?: { activeManifest?: { failure?: { code: string }[] } };
}

const STATE_OF: Record<string, CredentialState> = { Trusted: 'trusted', Valid: 'valid_untrusted', Invalid: 'invalid' };

/**
 * null when the file carries no manifest. The file's structure is scanned first (container-scan.ts):
 * a file past the bounds on boxes, depth, the store's size or its assertions is refused with a
 * ProblemError before c2pa-rs reads a byte of it.
 */
export async function readCredentials(asset: Uint8Array, mime: string, options: ReadOptions = {}): Promise<FileCredentials | null> {
  const container = credentialContainerOf(mime);
  if (!container) throw new TypeError(`Content Credentials are not read from ${mime} files`);
  if (!scanContainer(asset, container).store) return null;
  const anchors = splitAnchors(options.trustAnchors);
  const store = (await readManifestStore(asset, mime, { trustAnchors: anchors.authorities })) as ManifestStoreJson | null;
  if (!store) return null;
  const manifest = store.active_manifest ? store.manifests?.[store.active_manifest] : undefined;
  let failureCodes = (store.validation_results?.activeManifest?.failure ?? []).map((failure) => failure.code);
  const reportedState = STATE_OF[store.validation_state ?? ''] ?? 'invalid';
  // Without anchors c2pa-rs still says Valid for an intact manifest; an untrusted signer alone is not a broken file.
  let state = reportedState === 'invalid' && failureCodes.every((code) => TRUST_CODES.has(code)) ? 'valid_untrusted' : reportedState;
  const info = manifest?.signature_info ?? {};
  const trustedAsLeaf =
    state === 'valid_untrusted' && anchors.leaves.size > 0 && store.active_manifest !== undefined
      ? signedByLeaf(asset, store.active_manifest, info.cert_serial_number, anchors.leaves)
      : false;
  if (trustedAsLeaf) {
    state = 'trusted';
    failureCodes = failureCodes.filter((code) => !TRUST_CODES.has(code));
  }
  const assertions = manifest?.assertions ?? [];
  const ours = assertions.filter((assertion) => assertion.label === AUTHORIZATION_ASSERTION_LABEL);
  const actions = assertions
    .filter((assertion) => assertion.label === 'c2pa.actions' || assertion.label === 'c2pa.actions.v2')
    .flatMap((assertion) => (assertion.data as { actions?: { action?: string; digitalSourceType?: string }[] })?.actions ?? []);
  return {
    state,
    assertion_count: Object.values(store.manifests ?? {}).reduce((sum, each) => sum + (each.assertions?.length ?? 0), 0),
    failure_codes: failureCodes,
    signer: {
      common_name: info.common_name ?? null,
      issuer: info.issuer ?? null,
      serial_number: info.cert_serial_number ?? null,
      algorithm: info.alg ?? null,
    },
    trusted_as_leaf: trustedAsLeaf,
    synthetic: actions.some((action) => action.action === 'c2pa.created' && action.digitalSourceType === TRAINED_ALGORITHMIC_MEDIA),
    watermark_soft_bindings: watermarkSoftBindings(assertions),
    authorization: authorizationOf(ours.map((assertion) => assertion.data)),
  };
}

function authorizationOf(found: unknown[]): FileCredentials['authorization'] {
  if (found.length === 0) return { present: false };
  if (found.length > 1) return { present: true, valid: false, problems: ['more than one authorization assertion'] };
  const parsed = authorizationAssertionSchema.safeParse(found[0]);
  if (!parsed.success) {
    return {
      present: true,
      valid: false,
      problems: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
    };
  }
  return { present: true, valid: true, assertion: parsed.data };
}

/** CA certificates go to c2pa-rs as anchors; leaf certificates are matched by their fingerprint. */
function splitAnchors(pems: string | undefined): { authorities: string; leaves: Set<string> } {
  const blocks = pems?.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\r?\n?/g) ?? [];
  const authorities: string[] = [];
  const leaves = new Set<string>();
  for (const block of blocks) {
    const certificate = new X509Certificate(block);
    if (certificate.ca) authorities.push(block.endsWith('\n') ? block : `${block}\n`);
    else leaves.add(certificateFingerprint(new Uint8Array(certificate.raw)));
  }
  return { authorities: authorities.join(''), leaves };
}

/**
 * The active manifest was signed by one of `leaves`: the leaf in its signature verifies the claim
 * and is the certificate c2pa-rs validated the signature with (the serial it reports).
 */
function signedByLeaf(asset: Uint8Array, activeLabel: string, reportedSerial: string | undefined, leaves: Set<string>): boolean {
  const signer = signerCertificate(asset, activeLabel);
  if (!signer || !leaves.has(signer.fingerprint_sha256) || reportedSerial === undefined) return false;
  return BigInt(`0x${new X509Certificate(signer.der).serialNumber}`).toString() === reportedSerial;
}
