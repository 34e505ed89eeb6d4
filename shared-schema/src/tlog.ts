import { toHex } from './canonical.js';

/**
 * The audit log as a transparency log, in open formats that tools written elsewhere read: C2SP
 * signed-note (Ed25519), tlog-checkpoint, tlog-tiles and tlog-proof, with RFC 6962 hashing. The
 * origin writes these texts and the typed client reads them back; WebCrypto only, so the same code
 * runs in Node, a browser and a Worker.
 */

/** The origin line (and signed-note key name) unless TLOG_ORIGIN names another. */
export const DEFAULT_TLOG_ORIGIN = 'vip.local/audit';
export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';
/** tlog-tiles: each tile holds 2^8 hashes of one level. */
export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 256;
export const HASH_SIZE = 32;
/** The `Retry-After` of a receipt asked for before a signed checkpoint covers its entry. */
export const RECEIPT_RETRY_AFTER_SECONDS = 1;

/** signed-note: a signature line starts with an em dash and a space. */
const SIGNATURE_PREFIX = '\u2014 ';
/** signed-note's signature type byte for Ed25519. */
const ED25519_TYPE = 0x01;
const ED25519_PUBLIC_KEY_SIZE = 32;
const ED25519_SIGNATURE_SIZE = 64;
const KEY_ID_SIZE = 4;

const encoder = new TextEncoder();

/** Standard base64 (RFC 4648 section 4) with padding, as every C2SP format uses. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function fromBase64(text: string): Uint8Array {
  if (!BASE64.test(text)) throw new TlogFormatError(`not standard base64: ${JSON.stringify(text.slice(0, 40))}`);
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

/** A text that is not the format it claims to be, or a signature or proof that does not hold. */
export class TlogFormatError extends Error {
  override readonly name = 'TlogFormatError';
}

const sha256 = async (...parts: Uint8Array[]): Promise<Uint8Array> => {
  const joined = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', joined));
};

/** RFC 6962 2.1: a leaf is hashed behind a 0x00 byte, an inner node behind 0x01. */
export const rfc6962LeafHash = (leaf: string | Uint8Array) =>
  sha256(Uint8Array.of(0), typeof leaf === 'string' ? encoder.encode(leaf) : leaf);
export const rfc6962NodeHash = (left: Uint8Array, right: Uint8Array) => sha256(Uint8Array.of(1), left, right);

/**
 * The root an inclusion proof leads to (RFC 9162 2.1.3.2) for the leaf at `index` of a tree of
 * `size`; throws when the path has the wrong length for that position.
 */
export async function rootFromInclusionProof(index: number, size: number, leafHash: Uint8Array, path: readonly Uint8Array[]) {
  if (!(Number.isSafeInteger(index) && Number.isSafeInteger(size) && index >= 0 && index < size)) {
    throw new TlogFormatError(`index ${index} is outside a tree of ${size}`);
  }
  let fn = index;
  let sn = size - 1;
  let hash = leafHash;
  for (const sibling of path) {
    if (sn === 0) throw new TlogFormatError('the inclusion proof is longer than the tree is deep');
    if (fn % 2 === 1 || fn === sn) {
      hash = await rfc6962NodeHash(sibling, hash);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      hash = await rfc6962NodeHash(hash, sibling);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) throw new TlogFormatError('the inclusion proof is shorter than the tree is deep');
  return hash;
}

// --- tlog-checkpoint -------------------------------------------------------------------------------

export interface Checkpoint {
  origin: string;
  size: number;
  rootHash: Uint8Array;
}

/** The checkpoint's note text: origin, decimal size, base64 root, each line ending in a newline. */
export const checkpointText = ({ origin, size, rootHash }: Checkpoint): string => `${origin}\n${size}\n${toBase64(rootHash)}\n`;

export function parseCheckpointText(text: string): Checkpoint {
  const [origin, size, root] = text.split('\n');
  if (!origin || size === undefined || root === undefined || !text.endsWith('\n')) {
    throw new TlogFormatError('a checkpoint has an origin, a size and a root hash line');
  }
  if (!/^(0|[1-9]\d{0,15})$/.test(size) || !Number.isSafeInteger(Number(size)))
    throw new TlogFormatError(`bad tree size ${JSON.stringify(size)}`);
  const rootHash = fromBase64(root);
  if (rootHash.length !== HASH_SIZE) throw new TlogFormatError('the root hash is not 32 bytes');
  return { origin, size: Number(size), rootHash };
}

// --- signed-note ------------------------------------------------------------------------------------

const NAME = /^[^\s+\u2014]+$/u;

/** signed-note key ID: the first 4 bytes of SHA-256(name || "\n" || type byte || public key). */
export async function noteKeyId(name: string, publicKey: Uint8Array): Promise<Uint8Array> {
  return (await sha256(encoder.encode(`${name}\n`), Uint8Array.of(ED25519_TYPE), publicKey)).slice(0, KEY_ID_SIZE);
}

/** signed-note verifier key: `<name>+<hex key ID>+<base64(type byte || public key)>`. */
export async function noteVerifierKey(name: string, publicKey: Uint8Array): Promise<string> {
  if (!NAME.test(name)) throw new TlogFormatError(`a key name has no spaces, plus signs or em dashes: ${JSON.stringify(name)}`);
  const typed = new Uint8Array([ED25519_TYPE, ...publicKey]);
  return `${name}+${toHex(await noteKeyId(name, publicKey))}+${toBase64(typed)}`;
}

export interface NoteVerifier {
  name: string;
  keyId: Uint8Array;
  publicKey: Uint8Array;
}

export async function parseNoteVerifierKey(vkey: string): Promise<NoteVerifier> {
  const match = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(vkey.trim());
  if (!match) throw new TlogFormatError('a verifier key reads <name>+<8 hex digits>+<base64 key>');
  const [, name, keyIdHex, typedKey] = match as unknown as [string, string, string, string];
  const typed = fromBase64(typedKey);
  if (typed.length !== 1 + ED25519_PUBLIC_KEY_SIZE || typed[0] !== ED25519_TYPE) throw new TlogFormatError('not an Ed25519 verifier key');
  const publicKey = typed.slice(1);
  const keyId = await noteKeyId(name, publicKey);
  if (toHex(keyId) !== keyIdHex) throw new TlogFormatError('the verifier key ID does not match its name and key');
  return { name, keyId, publicKey };
}

/** A signature line for `text`, made by whoever holds the key (the origin signs with node:crypto). */
export const noteSignatureLine = (name: string, keyId: Uint8Array, signature: Uint8Array): string =>
  `${SIGNATURE_PREFIX}${name} ${toBase64(new Uint8Array([...keyId, ...signature]))}\n`;

/**
 * Checks that `note` carries a valid signature by `verifier` and returns its text. Signatures by
 * other keys (witness cosignatures) are allowed and ignored, as signed-note says.
 */
export async function openNote(note: string, verifier: NoteVerifier): Promise<string> {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new TlogFormatError('a signed note is text, a blank line and signature lines');
  const text = note.slice(0, split + 1);
  const key = await crypto.subtle.importKey('raw', verifier.publicKey as Uint8Array<ArrayBuffer>, { name: 'Ed25519' }, false, ['verify']);
  for (const line of note.slice(split + 2, -1).split('\n')) {
    if (!line.startsWith(SIGNATURE_PREFIX)) throw new TlogFormatError('a signature line starts with an em dash');
    const [name, encoded] = line.slice(SIGNATURE_PREFIX.length).split(' ');
    if (name !== verifier.name || encoded === undefined) continue;
    const signed = fromBase64(encoded);
    if (signed.length !== KEY_ID_SIZE + ED25519_SIGNATURE_SIZE || toHex(signed.slice(0, KEY_ID_SIZE)) !== toHex(verifier.keyId)) continue;
    const signature = signed.slice(KEY_ID_SIZE) as Uint8Array<ArrayBuffer>;
    if (await crypto.subtle.verify('Ed25519', key, signature, encoder.encode(text))) return text;
  }
  throw new TlogFormatError(`the note has no valid signature by ${verifier.name}`);
}

// --- tlog-proof -------------------------------------------------------------------------------------

export interface TlogProof {
  index: number;
  /** From the leaf's sibling up to the root's child (RFC 6962 2.1.1). */
  path: Uint8Array[];
  /** The signed checkpoint, verbatim. */
  checkpoint: string;
}

export const formatTlogProof = ({ index, path, checkpoint }: TlogProof): string =>
  `${TLOG_PROOF_HEADER}\nindex ${index}\n${path.map((hash) => `${toBase64(hash)}\n`).join('')}\n${checkpoint}`;

export function parseTlogProof(text: string): TlogProof {
  const split = text.indexOf('\n\n');
  if (split < 0) throw new TlogFormatError('a tlog-proof ends with a blank line and the checkpoint');
  const lines = text.slice(0, split).split('\n');
  if (lines[0] !== TLOG_PROOF_HEADER) throw new TlogFormatError(`a tlog-proof starts with ${TLOG_PROOF_HEADER}`);
  // The optional `extra` line is unauthenticated data; this service writes none and reads past any.
  const at = lines[1]?.startsWith('extra ') ? 2 : 1;
  const index = /^index (0|[1-9]\d{0,15})$/.exec(lines[at] ?? '');
  if (!index) throw new TlogFormatError('a tlog-proof names the entry with an `index <n>` line');
  const path = lines.slice(at + 1).map(fromBase64);
  if (path.some((hash) => hash.length !== HASH_SIZE)) throw new TlogFormatError('every proof hash is 32 bytes');
  return { index: Number(index[1]), path, checkpoint: text.slice(split + 2) };
}

// --- tlog-tiles -------------------------------------------------------------------------------------

/** A tile's index as tlog-tiles writes it: 3-digit elements, all but the last prefixed with `x`. */
export function tileIndexPath(index: number): string {
  const groups: string[] = [];
  let rest = index;
  do {
    groups.unshift(String(rest % 1000).padStart(3, '0'));
    rest = Math.floor(rest / 1000);
  } while (rest > 0);
  return groups.map((group, at) => (at < groups.length - 1 ? `x${group}` : group)).join('/');
}

/** `tile/<L>/<N>[.p/<W>]`, relative to the log's prefix; a full tile has no `.p` part. */
export const tilePath = (level: number, index: number, width: number): string =>
  `tile/${level}/${tileIndexPath(index)}${width < TILE_WIDTH ? `.p/${width}` : ''}`;

export interface TileAddress {
  level: number;
  index: number;
  /** 256 for a full tile. */
  width: number;
}

/** The inverse of tilePath, for the part after `tile/`; null when it is not a tile path. */
export function parseTilePath(path: string): TileAddress | null {
  const match = /^(0|[1-9]\d?)\/((?:x\d{3}\/){0,5}\d{3})(?:\.p\/([1-9]\d{0,2}))?$/.exec(path);
  if (!match) return null;
  const [, level, index, width] = match as unknown as [string, string, string, string | undefined];
  const tile = { level: Number(level), index: Number(index.replaceAll(/[x/]/g, '')), width: width ? Number(width) : TILE_WIDTH };
  const canonical = tileIndexPath(tile.index) === index;
  return canonical && tile.level < 64 && tile.width <= TILE_WIDTH && !(width && tile.width === TILE_WIDTH) ? tile : null;
}
