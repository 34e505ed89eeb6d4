import { limits } from '../limits.js';
import { ProblemError } from '../problem.js';
import type { ProvenanceMimeType } from '../provenance.js';
import { type Box, MANIFEST_STORE_DESCRIPTION, superbox } from './jumbf.js';

/**
 * A structural pre-scan of an uploaded file, before any parser (c2pa-rs, an audio decoder) sees it:
 * it walks the container as c2pa-rs does (RIFF chunks, ID3v2 frames, ISO BMFF boxes), bounded by
 * `limits.containerMaxBoxes` and `limits.containerMaxDepth`, checks every declared size against the
 * bytes there are, and finds the one manifest store c2pa-rs will parse. The store is measured and
 * its assertions counted here, so a file is refused in milliseconds, not after a full parse:
 * c2pa-rs's BMFF reader slows quadratically with the number of boxes, and its JUMBF parse with the
 * number of assertions. Linear in the file's size and the boxes walked; nothing is decoded.
 */

/** The containers Content Credentials are read from, and the MIME type c2pa-rs reads each as. */
export type CredentialContainer = 'wav' | 'mp3' | 'm4a';
export const MIME_OF_CREDENTIAL_CONTAINER: Readonly<Record<CredentialContainer, ProvenanceMimeType>> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
};
/** Whether a container (as the audio sniffer names it) is one Content Credentials are read from. */
export const isCredentialContainer = (container: string): container is CredentialContainer =>
  Object.hasOwn(MIME_OF_CREDENTIAL_CONTAINER, container);
export const credentialContainerOf = (mime: string): CredentialContainer | undefined =>
  (Object.keys(MIME_OF_CREDENTIAL_CONTAINER) as CredentialContainer[]).find(
    (container) => MIME_OF_CREDENTIAL_CONTAINER[container] === mime,
  );

export interface ContainerScan {
  /** The manifest store (JUMBF) c2pa-rs will parse, exactly the bytes it reads; null when the file carries none. */
  store: Uint8Array | null;
  /** Assertions in all the store's manifests (hash bindings and ingredients' included). */
  assertionCount: number;
}

/** ISO BMFF `uuid` box user type of C2PA's ContentProvenanceBox. */
const C2PA_BOX_UUID = Uint8Array.from([0xd8, 0xfe, 0xc3, 0xd6, 0x1b, 0x0e, 0x48, 0x3c, 0x92, 0x97, 0x58, 0x28, 0x87, 0x7e, 0xc4, 0x81]);
/** The GEOB MIME types c2pa-rs reads an MP3's manifest store from. */
const C2PA_GEOB_MIME_TYPES = new Set(['application/c2pa', 'application/x-c2pa-manifest-store']);
/** BMFF boxes c2pa-rs descends into. */
const BMFF_CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'moof', 'traf', 'mvex', 'meta']);

const tooLarge = (detail: string) => new ProblemError('payload_too_large', detail);
const corrupt = (detail: string) => new ProblemError('corrupt_audio', detail);
const malformed = (detail: string) => new ProblemError('malformed_manifest', detail);

/** Counts every box, chunk and frame walked, and refuses the file at once past the limit. */
class BoxBudget {
  private count = 0;
  take(depth: number): void {
    if (++this.count > limits.containerMaxBoxes) {
      throw tooLarge(`The file holds more than ${limits.containerMaxBoxes} boxes, chunks or frames; it is not read.`);
    }
    if (depth > limits.containerMaxDepth) throw tooLarge(`The file's boxes nest deeper than ${limits.containerMaxDepth} levels.`);
  }
}

const fourcc = (bytes: Uint8Array, at: number) => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
const viewOf = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, at) => byte === b[at]);

/** Where a candidate store lies in the file: [start, end). */
type Span = [number, number];

/**
 * Scans `bytes` as `container`. Throws a ProblemError: 413 `payload_too_large` past a bound (boxes,
 * depth, the store's size), 422 `corrupt_audio` for a structure that does not add up, 422
 * `malformed_manifest` for a manifest store that is ambiguous (two stores, or a store's signature
 * outside the one c2pa-rs reads), not JUMBF, or holds more than `limits.manifestMaxAssertions`.
 */
export function scanContainer(bytes: Uint8Array, container: CredentialContainer): ContainerScan {
  const budget = new BoxBudget();
  const candidates =
    container === 'wav' ? riffStores(bytes, budget) : container === 'mp3' ? id3Stores(bytes, budget) : bmffStores(bytes, budget);
  if (candidates.length > 1) throw malformed(`The file carries ${candidates.length} manifest stores; one is read.`);
  const span = candidates[0];
  if (span && span[1] - span[0] > limits.manifestStoreMaxBytes) {
    throw tooLarge(`The file's manifest store is larger than ${limits.manifestStoreMaxBytes} bytes.`);
  }
  refuseStrayStores(bytes, span);
  if (!span) return { store: null, assertionCount: 0 };
  const store = bytes.subarray(span[0], span[1]);
  const assertionCount = countAssertions(store);
  if (assertionCount > limits.manifestMaxAssertions) {
    throw malformed(`The file's manifests hold ${assertionCount} assertions; at most ${limits.manifestMaxAssertions} are read.`);
  }
  // Every box of the store counts against the same bounds as the container's.
  walkBoxes(store, { start: 0, end: store.length, depth: 1 }, budget, malformed, (box) => (box.type === 'jumb' ? box.bodyStart : null));
  return { store, assertionCount };
}

/**
 * A manifest store's signature anywhere but in the store c2pa-rs reads (a decoy in a `junk` chunk, a
 * second box) makes the file ambiguous: whatever else reads it might take the other one.
 */
function refuseStrayStores(bytes: Uint8Array, span: Span | undefined): void {
  const haystack = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = haystack.indexOf(MANIFEST_STORE_DESCRIPTION); at >= 0; at = haystack.indexOf(MANIFEST_STORE_DESCRIPTION, at + 1)) {
    if (!span || at < span[0] || at >= span[1])
      throw malformed('The file carries a manifest store outside the one Content Credentials are read from.');
  }
}

/** WAV: c2pa-rs reads the top-level `C2PA` chunk of the RIFF form. */
function riffStores(bytes: Uint8Array, budget: BoxBudget): Span[] {
  const view = viewOf(bytes);
  const stores: Span[] = [];
  // A WAV written to a pipe declares more than it holds (its RIFF and data sizes are unknown then): the walk ends at the file's end.
  const end = Math.min(bytes.length, 8 + view.getUint32(4, true));
  for (let at = 12; at + 8 <= end; ) {
    budget.take(1);
    const id = fourcc(bytes, at);
    const size = view.getUint32(at + 4, true);
    const dataEnd = at + 8 + size;
    if (id === 'C2PA') {
      if (dataEnd > bytes.length)
        throw malformed('The manifest store is cut short: its C2PA chunk declares more bytes than the file holds.');
      stores.push([at + 8, dataEnd]);
    }
    at = dataEnd + (size % 2);
  }
  return stores;
}

const syncsafe = (bytes: Uint8Array, at: number) =>
  ((bytes[at]! & 0x7f) << 21) | ((bytes[at + 1]! & 0x7f) << 14) | ((bytes[at + 2]! & 0x7f) << 7) | (bytes[at + 3]! & 0x7f);

/** Frame format flags that make a frame's body other than its bytes: compression, encryption (v2.3 and v2.4). */
const ID3_OPAQUE_FRAME_FLAGS: Readonly<Record<number, number>> = { 3: 0x00c0, 4: 0x000c };

/** MP3: c2pa-rs reads the GEOB frames of a C2PA MIME type in the ID3v2 tag at the file's start. */
function id3Stores(bytes: Uint8Array, budget: BoxBudget): Span[] {
  if (bytes.length < 10 || fourcc(bytes, 0).slice(0, 3) !== 'ID3') return [];
  const version = bytes[3]!;
  if (version < 2 || version > 4) return [];
  const tagEnd = 10 + syncsafe(bytes, 6);
  if (tagEnd > bytes.length) throw corrupt('The ID3 tag declares more bytes than the file holds.');
  const view = viewOf(bytes);
  const headerSize = version === 2 ? 6 : 10;
  let at = 10;
  if (bytes[5]! & 0x40 && version > 2) at += version === 4 ? syncsafe(bytes, 10) : 4 + view.getUint32(10);
  const stores: Span[] = [];
  while (at + headerSize <= tagEnd && bytes[at] !== 0) {
    budget.take(1);
    const id = version === 2 ? fourcc(bytes, at).slice(0, 3) : fourcc(bytes, at);
    if (!/^[A-Z0-9]+$/.test(id)) throw corrupt('The ID3 tag holds a frame that is not one.');
    const size = version === 2 ? view.getUint32(at) >>> 8 : version === 4 ? syncsafe(bytes, at + 4) : view.getUint32(at + 4);
    const bodyStart = at + headerSize;
    const bodyEnd = bodyStart + size;
    if (bodyEnd > tagEnd) throw corrupt('An ID3 frame declares more bytes than its tag holds.');
    if (version > 2 && view.getUint16(at + 8) & ID3_OPAQUE_FRAME_FLAGS[version]!) {
      throw new ProblemError('unsupported_format', 'The ID3 tag holds compressed or encrypted frames, which are not read.');
    }
    if (id === 'GEOB' || id === 'GEO') {
      const data = geobData(bytes, bodyStart, bodyEnd);
      if (data) stores.push(data);
    }
    at = bodyEnd;
  }
  return stores;
}

/** The encapsulated object of a GEOB frame when its MIME type is C2PA's; null otherwise. */
function geobData(bytes: Uint8Array, start: number, end: number): Span | null {
  const encoding = bytes[start]!;
  const mimeEnd = bytes.indexOf(0, start + 1);
  if (mimeEnd < 0 || mimeEnd >= end) return null;
  const mime = new TextDecoder('latin1').decode(bytes.subarray(start + 1, mimeEnd));
  if (!C2PA_GEOB_MIME_TYPES.has(mime)) return null;
  // The file name and the description, each ended by a NUL of the frame's text encoding (two bytes in UTF-16).
  const wide = encoding === 1 || encoding === 2;
  let at = mimeEnd + 1;
  for (let text = 0; text < 2; text++) {
    while (at < end && !(wide ? bytes[at] === 0 && bytes[at + 1] === 0 : bytes[at] === 0)) at += wide ? 2 : 1;
    if (at >= end) throw malformed('The C2PA frame of the ID3 tag is cut short.');
    at += wide ? 2 : 1;
  }
  return [at, end];
}

/** M4A: c2pa-rs reads the top-level `uuid` box of C2PA's type whose purpose is `manifest`. */
function bmffStores(bytes: Uint8Array, budget: BoxBudget): Span[] {
  const stores: Span[] = [];
  walkBoxes(bytes, { start: 0, end: bytes.length, depth: 1 }, budget, corrupt, (box, depth) => {
    const { type, bodyStart, end } = box;
    if (type === 'uuid' && end - bodyStart >= 20 && sameBytes(bytes.subarray(bodyStart, bodyStart + 16), C2PA_BOX_UUID)) {
      // The user type, the full box's version and flags, a NUL-ended purpose and, for a manifest, an 8-byte offset.
      const purposeEnd = bytes.indexOf(0, bodyStart + 20);
      if (purposeEnd < 0 || purposeEnd >= end) throw malformed('The C2PA box is cut short.');
      const purpose = new TextDecoder('latin1').decode(bytes.subarray(bodyStart + 20, purposeEnd));
      if (purpose === 'manifest') {
        if (depth > 1) throw malformed('The file carries a C2PA box inside another box.');
        if (purposeEnd + 9 > end) throw malformed('The C2PA box is cut short.');
        stores.push([purposeEnd + 9, end]);
      }
    }
    if (!BMFF_CONTAINERS.has(type)) return null;
    // An ISO `meta` is a full box (4 bytes of version and flags, all zero, before its children); QuickTime's is not.
    const fullBoxHeader = type === 'meta' && end - bodyStart >= 4 && bytes.subarray(bodyStart, bodyStart + 4).every((byte) => byte === 0);
    return fullBoxHeader ? bodyStart + 4 : bodyStart;
  });
  return stores;
}

interface BoxSpan {
  type: string;
  bodyStart: number;
  end: number;
}

/**
 * Walks the ISO BMFF-style boxes (BMFF, JUMBF) tiling [start, end), each counted against the budget;
 * `visit` answers where a box's children start, or null for a box not walked into. A box that
 * does not fit where it is declared is `fail`'s problem.
 */
function walkBoxes(
  bytes: Uint8Array,
  range: { start: number; end: number; depth: number },
  budget: BoxBudget,
  fail: (detail: string) => ProblemError,
  visit: (box: BoxSpan, depth: number) => number | null,
): void {
  const view = viewOf(bytes);
  const { end, depth } = range;
  for (let at = range.start; at < end; ) {
    budget.take(depth);
    if (at + 8 > end) throw fail('A box header is cut short.');
    let size = view.getUint32(at);
    let header = 8;
    if (size === 1) {
      if (at + 16 > end) throw fail('A box header is cut short.');
      const large = view.getBigUint64(at + 8);
      size = large > BigInt(end - at) ? Number.POSITIVE_INFINITY : Number(large);
      header = 16;
    } else if (size === 0) size = end - at;
    if (size < header || at + size > end) throw fail('A box declares more bytes than there are.');
    const box = { type: fourcc(bytes, at + 4), bodyStart: at + header, end: at + size };
    const childrenStart = visit(box, depth);
    if (childrenStart !== null) walkBoxes(bytes, { start: childrenStart, end: box.end, depth: depth + 1 }, budget, fail, visit);
    at += size;
  }
}

/**
 * The assertions in all the store's manifests, counted from its JUMBF superboxes (store > manifest >
 * `c2pa.assertions` > one superbox per assertion): three levels of box headers, linear in the
 * store's size, which is within its limit by now.
 */
function countAssertions(store: Uint8Array): number {
  const only = jumbfTopLevel(store);
  const storeBox = only ? superbox(only) : null;
  if (storeBox?.label !== 'c2pa') throw malformed('The manifest store is not one JUMBF superbox labelled c2pa.');
  let count = 0;
  for (const manifest of storeBox.children) {
    const assertions = superbox(manifest)
      ?.children.map(superbox)
      .find((child) => child?.label === 'c2pa.assertions');
    count += assertions?.children.filter((child) => child.type === 'jumb').length ?? 0;
  }
  return count;
}

/** The store's one top-level box; null when it is not exactly one box. */
function jumbfTopLevel(store: Uint8Array): Box | null {
  const view = viewOf(store);
  if (store.length < 8) return null;
  const size = view.getUint32(0);
  const header = size === 1 ? 16 : 8;
  if (store.length < header) return null;
  const length = size === 1 ? Number(view.getBigUint64(8)) : size === 0 ? store.length : size;
  return length === store.length ? { type: fourcc(store, 4), body: store.subarray(header) } : null;
}
