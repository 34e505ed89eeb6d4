import { createHash, constants as cryptoConstants, verify, X509Certificate } from 'node:crypto';
import { Decoder, Encoder, Tag } from 'cbor-x';
import { cborContent, onlyChild, soleManifestStore } from './jumbf.js';

/**
 * The certificate that signed a file's active C2PA manifest, which c2pa-rs (0.91 in
 * `@contentauth/c2pa-wasm`) does not hand out: its reader reports the signer's name and serial only,
 * and it never trusts a leaf given as a trust anchor. Read here from the manifest's claim signature
 * (JUMBF box `c2pa.signature`, a COSE_Sign1 whose header label 33 is the x5chain, leaf first), and
 * only believed when that leaf's key verifies the signature over the manifest's own claim, so a
 * platform can register the leaf certificate it signs with (docs/CONTRACT.md#content-credentials).
 */

const COSE_HEADER_ALG = 1;
const COSE_HEADER_X5CHAIN = 33;
const COSE_SIGN1_TAG = 18;

const decoder = new Decoder({ mapsAsObjects: false, useRecords: false });
const encoder = new Encoder({ useRecords: false, tagUint8Array: false, mapsAsObjects: false, variableMapSize: true });

/** How each COSE algorithm (RFC 9053) is verified with node:crypto. */
const VERIFIERS: Record<number, (data: Uint8Array, key: X509Certificate['publicKey'], signature: Uint8Array) => boolean> = {
  [-7]: (data, key, signature) => verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature),
  [-35]: (data, key, signature) => verify('sha384', data, { key, dsaEncoding: 'ieee-p1363' }, signature),
  [-36]: (data, key, signature) => verify('sha512', data, { key, dsaEncoding: 'ieee-p1363' }, signature),
  [-8]: (data, key, signature) => verify(null, data, key, signature),
  [-37]: (data, key, signature) =>
    verify('sha256', data, { key, padding: cryptoConstants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, signature),
  [-38]: (data, key, signature) =>
    verify('sha384', data, { key, padding: cryptoConstants.RSA_PKCS1_PSS_PADDING, saltLength: 48 }, signature),
  [-39]: (data, key, signature) =>
    verify('sha512', data, { key, padding: cryptoConstants.RSA_PKCS1_PSS_PADDING, saltLength: 64 }, signature),
};

export interface SignerCertificate {
  /** DER of the leaf certificate that signed the claim. */
  der: Uint8Array;
  /** SHA-256 of the DER, lowercase hex, as registered signing certificates are fingerprinted. */
  fingerprint_sha256: string;
}

export const certificateFingerprint = (der: Uint8Array) => createHash('sha256').update(der).digest('hex');

/**
 * The leaf certificate that signed the active manifest (`activeLabel`, as c2pa-rs names it) of the
 * one manifest store in `asset`; null when the store, the manifest, its claim or its signature is
 * missing or ambiguous (two stores, two manifests of that label), or when the leaf's key does not
 * verify the claim signature.
 */
export function signerCertificate(asset: Uint8Array, activeLabel: string): SignerCertificate | null {
  const store = soleManifestStore(asset);
  const manifest = store ? onlyChild(store, activeLabel) : null;
  if (!manifest) return null;
  const claims = ['c2pa.claim.v2', 'c2pa.claim'].map((label) => onlyChild(manifest, label)).filter((claim) => claim !== null);
  const claim = claims.length === 1 ? cborContent(claims[0]!) : null;
  const signatureBytes = cborContent(onlyChild(manifest, 'c2pa.signature'));
  if (!claim || !signatureBytes) return null;
  let cose: unknown;
  try {
    cose = decoder.decode(signatureBytes);
  } catch {
    return null;
  }
  const sign1 = cose instanceof Tag && cose.tag === COSE_SIGN1_TAG ? cose.value : cose;
  if (!Array.isArray(sign1) || sign1.length !== 4) return null;
  const [protectedBytes, unprotected, , signature] = sign1 as [unknown, unknown, unknown, unknown];
  if (!(protectedBytes instanceof Uint8Array) || !(signature instanceof Uint8Array)) return null;
  let header: unknown;
  try {
    header = protectedBytes.length > 0 ? decoder.decode(protectedBytes) : new Map();
  } catch {
    return null;
  }
  if (!(header instanceof Map)) return null;
  const chain = header.get(COSE_HEADER_X5CHAIN) ?? (unprotected instanceof Map ? unprotected.get(COSE_HEADER_X5CHAIN) : undefined);
  const leaf = chain instanceof Uint8Array ? chain : Array.isArray(chain) ? chain[0] : undefined;
  const verifier = VERIFIERS[header.get(COSE_HEADER_ALG) as number];
  if (!(leaf instanceof Uint8Array) || !verifier) return null;
  try {
    const certificate = new X509Certificate(leaf);
    const toBeSigned = encoder.encode(['Signature1', protectedBytes, new Uint8Array(0), claim]);
    if (!verifier(toBeSigned, certificate.publicKey, signature)) return null;
  } catch {
    return null;
  }
  const der = Uint8Array.from(leaf);
  return { der, fingerprint_sha256: certificateFingerprint(der) };
}
