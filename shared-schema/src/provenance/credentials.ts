import {
  AUTHORIZATION_ASSERTION_LABEL,
  type AuthorizationAssertion,
  authorizationAssertionSchema,
  type CredentialState,
  TRAINED_ALGORITHMIC_MEDIA,
} from '../provenance.js';
import { type ReadOptions, readManifestStore } from './c2pa.js';

/**
 * A file's Content Credentials as c2pa-rs judges them, reduced to what a verifier of this service
 * acts on. Node only (c2pa-rs in WASM); the origin's verify route and the client's offline check
 * both read files through here.
 */

/** Codes about trust alone: the manifest is intact, only its signer is unknown to the anchors given. */
const TRUST_CODES = new Set(['signingCredential.untrusted']);

export interface FileCredentials {
  state: CredentialState;
  /** Assertions in all the file's manifests (active and ingredients'). */
  assertion_count: number;
  /** Failure codes c2pa-rs reported for the active manifest (trust failures included). */
  failure_codes: string[];
  signer: { common_name: string | null; issuer: string | null; serial_number: string | null; algorithm: string | null };
  /** Whether a c2pa.created action says a trained model made the audio. */
  synthetic: boolean;
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

/** null when the file carries no manifest. */
export async function readCredentials(asset: Uint8Array, mime: string, options: ReadOptions = {}): Promise<FileCredentials | null> {
  const store = (await readManifestStore(asset, mime, options)) as ManifestStoreJson | null;
  if (!store) return null;
  const manifest = store.active_manifest ? store.manifests?.[store.active_manifest] : undefined;
  const failureCodes = (store.validation_results?.activeManifest?.failure ?? []).map((failure) => failure.code);
  const reportedState = STATE_OF[store.validation_state ?? ''] ?? 'invalid';
  // Without anchors c2pa-rs still says Valid for an intact manifest; an untrusted signer alone is not a broken file.
  const state = reportedState === 'invalid' && failureCodes.every((code) => TRUST_CODES.has(code)) ? 'valid_untrusted' : reportedState;
  const assertions = manifest?.assertions ?? [];
  const ours = assertions.filter((assertion) => assertion.label === AUTHORIZATION_ASSERTION_LABEL);
  const actions = assertions
    .filter((assertion) => assertion.label === 'c2pa.actions' || assertion.label === 'c2pa.actions.v2')
    .flatMap((assertion) => (assertion.data as { actions?: { action?: string; digitalSourceType?: string }[] })?.actions ?? []);
  const info = manifest?.signature_info ?? {};
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
    synthetic: actions.some((action) => action.action === 'c2pa.created' && action.digitalSourceType === TRAINED_ALGORITHMIC_MEDIA),
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

/** JUMBF (ISO 19566-5): a superbox `jumb` whose description box `jumd` carries the C2PA manifest store's type UUID. */
const MANIFEST_STORE_DESCRIPTION = Uint8Array.from([
  ...new TextEncoder().encode('jumdc2pa'),
  0x00,
  0x11,
  0x00,
  0x10,
  0x80,
  0x00,
  0x00,
  0xaa,
  0x00,
  0x38,
  0x9b,
  0x71,
]);

/**
 * The size in bytes of the C2PA manifest store embedded in a file (WAV chunk, ID3 frame or BMFF box
 * all hold the JUMBF as is), read from its box header before anything parses it; null when none is
 * found. A box with a 64-bit length counts as larger than any limit.
 */
export function manifestStoreSize(asset: Uint8Array): number | null {
  const at = indexOfBytes(asset, MANIFEST_STORE_DESCRIPTION);
  const start = at - 12;
  if (at < 0 || start < 0 || new TextDecoder().decode(asset.subarray(start + 4, start + 8)) !== 'jumb') return null;
  const length = new DataView(asset.buffer, asset.byteOffset + start, 4).getUint32(0);
  return length === 1 ? Number.POSITIVE_INFINITY : length;
}

function indexOfBytes(haystack: Uint8Array, needle: Uint8Array): number {
  const first = needle[0]!;
  for (let at = haystack.indexOf(first); at >= 0 && at <= haystack.length - needle.length; at = haystack.indexOf(first, at + 1)) {
    let matched = true;
    for (let offset = 1; offset < needle.length && matched; offset++) matched = haystack[at + offset] === needle[offset];
    if (matched) return at;
  }
  return -1;
}
