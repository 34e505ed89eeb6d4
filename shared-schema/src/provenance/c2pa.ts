import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { initSync, WasmBuilder, WasmReader } from '@contentauth/c2pa-wasm';
import { Encoder, Tag } from 'cbor-x';

/**
 * C2PA through the reference implementation (c2pa-rs in `@contentauth/c2pa-wasm`), offline, on
 * Node. Two things the WASM build expects of a browser are bridged here (shared/TOOLCHAIN.md): it
 * reads the asset to sign through `FileReaderSync`, and its `sign` callback must return a whole
 * COSE_Sign1 of exactly the reserved size, which this file builds with node:crypto.
 */

const require = createRequire(import.meta.url);
let loaded = false;

/** Instantiates the WASM module once per process (50–120 ms). */
export function loadC2pa(): void {
  if (loaded) return;
  initSync({ module: readFileSync(require.resolve('@contentauth/c2pa-wasm/c2pa.wasm')) });
  loaded = true;
}

/** A Blob whose bytes can be read synchronously, as the WASM builder reads its source asset. */
class BytesBlob extends Blob {
  constructor(readonly content: Uint8Array) {
    super([content as Uint8Array<ArrayBuffer>]);
  }
  override slice(start?: number, end?: number): BytesBlob {
    return new BytesBlob(this.content.subarray(start ?? 0, end ?? this.content.length));
  }
}

/** Only what the builder calls: `readAsArrayBuffer` of a BytesBlob. */
class BytesBlobReader {
  readAsArrayBuffer(blob: Blob): ArrayBuffer {
    if (!(blob instanceof BytesBlob)) throw new TypeError('only the bytes handed to the C2PA builder can be read synchronously');
    return blob.content.slice().buffer as ArrayBuffer;
  }
}
const globals = globalThis as { FileReaderSync?: unknown };
globals.FileReaderSync ??= BytesBlobReader;

const cbor = new Encoder({ useRecords: false, tagUint8Array: false, mapsAsObjects: false, variableMapSize: true });

/** COSE algorithm ids (RFC 9053) and the names c2pa-rs gives them. */
const COSE_ALGORITHMS = { es256: { id: -7, name: 'es256' }, ed25519: { id: -8, name: 'ed25519' } } as const;
const COSE_HEADER_ALG = 1;
/** RFC 9360: the certificate chain, leaf first. */
const COSE_HEADER_X5CHAIN = 33;
const COSE_SIGN1_TAG = 18;
/** Room for the COSE_Sign1: the chain, a signature and the padding; c2pa-rs reserves this many bytes in the file. */
const RESERVE_BASE = 2048;

/** How a platform signs: its certificate chain (leaf first, DER) and the leaf's private key, which never leaves this process. */
export interface C2paSigner {
  certificateChain: readonly Uint8Array[];
  /** Signs the COSE Sig_structure: ECDSA P-256 (raw r‖s) or Ed25519. */
  sign: (data: Uint8Array) => Promise<Uint8Array> | Uint8Array;
  algorithm: keyof typeof COSE_ALGORITHMS;
}

/** A COSE_Sign1 with a detached payload (the claim), padded with an unprotected `pad` to exactly `size` bytes. */
async function coseSign1(claim: Uint8Array, signer: C2paSigner, size: number): Promise<Uint8Array> {
  const protectedHeader = cbor.encode(
    new Map<number, unknown>([
      [COSE_HEADER_ALG, COSE_ALGORITHMS[signer.algorithm].id],
      [COSE_HEADER_X5CHAIN, signer.certificateChain.map((certificate) => Uint8Array.from(certificate))],
    ]),
  );
  const toBeSigned = cbor.encode(['Signature1', protectedHeader, new Uint8Array(0), claim]);
  const signature = await signer.sign(toBeSigned);
  const encode = (padLength: number) =>
    cbor.encode(new Tag([protectedHeader, new Map([['pad', new Uint8Array(padLength)]]), null, signature], COSE_SIGN1_TAG)) as Uint8Array;
  // A longer pad can also lengthen its own length prefix: settle on the length that lands exactly.
  let padLength = Math.max(0, size - encode(0).length);
  for (let tries = 0; tries < 4; tries++) {
    const encoded = encode(padLength);
    if (encoded.length === size) return encoded;
    padLength = Math.max(0, padLength - (encoded.length - size));
  }
  throw new Error(`cannot pad the COSE signature to ${size} bytes`);
}

export interface ManifestAssertion {
  label: string;
  data: unknown;
  kind?: 'Cbor' | 'Json';
}

/** Writes a manifest of `assertions` into `asset` and signs it; returns the signed asset. */
export async function signAsset(
  asset: Uint8Array,
  mime: string,
  manifest: { claimGenerator: { name: string; version: string }; title?: string; assertions: readonly ManifestAssertion[] },
  signer: C2paSigner,
): Promise<Uint8Array> {
  loadC2pa();
  const definition = {
    claim_generator_info: [manifest.claimGenerator],
    title: manifest.title,
    format: mime,
    assertions: manifest.assertions,
  };
  const builder = WasmBuilder.fromJson(JSON.stringify(definition), JSON.stringify({ builder: { thumbnail: { enabled: false } } }));
  try {
    const reserveSize = RESERVE_BASE + signer.certificateChain.reduce((sum, certificate) => sum + certificate.length + 8, 0);
    const signed = await builder.sign(
      {
        alg: COSE_ALGORITHMS[signer.algorithm].name,
        reserveSize,
        sign: async (claim) => (await coseSign1(claim, signer, reserveSize)) as Uint8Array<ArrayBuffer>,
      },
      [],
      mime,
      new BytesBlob(asset),
    );
    return signed;
  } finally {
    builder.free();
  }
}

/** What c2pa-rs reports of a file's manifest store; null when the file carries none. `trustAnchors`: PEM CA certificates a signer's chain must reach to be `Trusted`. */
export async function readManifestStore(asset: Uint8Array, mime: string, options: { trustAnchors?: string } = {}): Promise<unknown | null> {
  loadC2pa();
  const settings = options.trustAnchors
    ? { verify: { verify_trust: true }, trust: { trust_anchors: options.trustAnchors } }
    : { verify: { verify_trust: false } };
  let reader: WasmReader;
  try {
    reader = await WasmReader.fromBytes(mime, asset, JSON.stringify(settings));
  } catch (error) {
    if (String((error as Error)?.message ?? error).includes('JumbfNotFound')) return null;
    throw error;
  }
  try {
    return JSON.parse(reader.json());
  } finally {
    reader.free();
  }
}
