/**
 * JUMBF (ISO 19566-5), as C2PA lays a manifest store into a file: boxes in the ISO BMFF manner,
 * superboxes (`jumb`) that start with a description box (`jumd`: a type UUID, toggles, a label).
 * Read here only as far as a verifier needs before and besides c2pa-rs: the boxes of one manifest
 * (where the store lies in a file, and how large it is, is container-scan.ts's).
 */

/** JUMBF (ISO 19566-5): a superbox `jumb` whose description box `jumd` carries the C2PA manifest store's type UUID. */
export const MANIFEST_STORE_DESCRIPTION = Uint8Array.from([
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

export interface Box {
  type: string;
  /** The box's payload (after its header). */
  body: Uint8Array;
}

/** ISO BMFF-style boxes (JUMBF is built of them) laid end to end in `bytes`; null when they do not tile it exactly. */
function boxesIn(bytes: Uint8Array): Box[] | null {
  const boxes: Box[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at < bytes.length; ) {
    if (at + 8 > bytes.length) return null;
    let length = view.getUint32(at);
    let header = 8;
    if (length === 1) {
      if (at + 16 > bytes.length) return null;
      const long = view.getBigUint64(at + 8);
      if (long > BigInt(bytes.length)) return null;
      length = Number(long);
      header = 16;
    } else if (length === 0) length = bytes.length - at;
    if (length < header || at + length > bytes.length) return null;
    boxes.push({ type: new TextDecoder().decode(bytes.subarray(at + 4, at + 8)), body: bytes.subarray(at + header, at + length) });
    at += length;
  }
  return boxes;
}

export interface Superbox {
  label: string | null;
  children: Box[];
}

/** A JUMBF superbox (`jumb`): its description box's label and the boxes after it. */
export function superbox(box: Box): Superbox | null {
  if (box.type !== 'jumb') return null;
  const children = boxesIn(box.body);
  const description = children?.[0];
  if (!children || description?.type !== 'jumd' || description.body.length < 17) return null;
  const toggles = description.body[16]!;
  let label: string | null = null;
  if (toggles & 0x02) {
    const end = description.body.indexOf(0, 17);
    if (end < 0) return null;
    label = new TextDecoder().decode(description.body.subarray(17, end));
  }
  return { label, children: children.slice(1) };
}

/** The one child superbox labelled `label`; null when there is none or more than one. */
export function onlyChild(parent: Superbox, label: string): Superbox | null {
  const found = parent.children.map(superbox).filter((child) => child?.label === label);
  return found.length === 1 ? found[0]! : null;
}

/** The payload of the one `cbor` content box of a superbox. */
export function cborContent(box: Superbox | null): Uint8Array | null {
  const contents = box?.children.filter((child) => child.type === 'cbor') ?? [];
  return contents.length === 1 ? contents[0]!.body : null;
}

/** The file's manifest store, when it holds exactly one (WAV chunk, ID3 frame and BMFF box all carry the JUMBF as is). */
export function soleManifestStore(asset: Uint8Array): Superbox | null {
  const found: number[] = [];
  for (let at = indexOf(asset, MANIFEST_STORE_DESCRIPTION, 0); at >= 0; at = indexOf(asset, MANIFEST_STORE_DESCRIPTION, at + 1)) {
    found.push(at);
  }
  if (found.length !== 1) return null;
  const start = found[0]! - 12;
  if (start < 0) return null;
  const boxes = boxesIn(asset.subarray(start, start + new DataView(asset.buffer, asset.byteOffset + start, 4).getUint32(0)));
  return boxes?.length === 1 ? superbox(boxes[0]!) : null;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  return Buffer.from(haystack.buffer, haystack.byteOffset, haystack.byteLength).indexOf(needle, from);
}
