import { sign } from 'node:crypto';
import type { PlatformSigner } from '../client/provenance.js';
import { type ManifestAssertion, signAsset } from '../provenance/c2pa.js';
import { TRAINED_ALGORITHMIC_MEDIA } from '../provenance.js';

/**
 * Files built to cost a reader as much as possible (issue 31): many boxes, a manifest store that hides
 * its size, a decoy store, a flood of assertions. Generated in the test that uses them, never committed.
 */

/** The `c2pa.created` action every manifest starts with (c2pa-rs refuses a manifest without one). */
export const CREATED_ACTION: ManifestAssertion = {
  label: 'c2pa.actions.v2',
  data: { actions: [{ action: 'c2pa.created', digitalSourceType: TRAINED_ALGORITHMIC_MEDIA }] },
};

/** `audio` signed by `signer` with a manifest of `assertions` after the created action: what a forger or a careless platform could write. */
export function signedWithAssertions(
  audio: Uint8Array,
  mime: string,
  assertions: readonly ManifestAssertion[],
  signer: PlatformSigner,
): Promise<Uint8Array> {
  const der = (certificate: string | Uint8Array) =>
    typeof certificate === 'string'
      ? new Uint8Array(Buffer.from(certificate.replaceAll(/-----[^-]+-----|\s/g, ''), 'base64'))
      : certificate;
  return signAsset(
    audio,
    mime,
    { claimGenerator: { name: 'test', version: '1' }, assertions: [CREATED_ACTION, ...assertions] },
    {
      certificateChain: signer.certificateChain.map(der),
      algorithm: 'es256',
      sign: (data) => sign('sha256', data, { key: signer.privateKey, dsaEncoding: 'ieee-p1363' }),
    },
  );
}

/** A manifest whose store is over 256 KiB: one assertion of padding. */
export const PADDING_ASSERTION: ManifestAssertion = { label: 'local.test.padding', data: { padding: 'x'.repeat(300 * 1024) } };

/** `count` assertions, each a few bytes. */
export const manyAssertions = (count: number): ManifestAssertion[] =>
  Array.from({ length: count }, (_, at) => ({ label: `local.test.a${at}`, data: { at } }));

/** The reproduction: an M4A followed by `count` eight-byte `free` boxes. */
export function withFreeBoxes(m4a: Uint8Array, count: number): Uint8Array {
  const file = new Uint8Array(m4a.length + 8 * count);
  file.set(m4a);
  const view = new DataView(file.buffer);
  for (let at = m4a.length; at < file.length; at += 8) {
    view.setUint32(at, 8);
    file.set([0x66, 0x72, 0x65, 0x65], at + 4); // 'free'
  }
  return file;
}

interface RiffChunk {
  id: string;
  data: Uint8Array;
}

/** The chunks of a RIFF WAVE file, in order. */
export function riffChunks(wav: Uint8Array): RiffChunk[] {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const chunks: RiffChunk[] = [];
  for (let at = 12; at + 8 <= wav.length; ) {
    const size = view.getUint32(at + 4, true);
    chunks.push({ id: new TextDecoder().decode(wav.subarray(at, at + 4)), data: wav.subarray(at + 8, at + 8 + size) });
    at += 8 + size + (size % 2);
  }
  return chunks;
}

/** A RIFF WAVE file of `chunks`, sizes and padding written as they add up. */
export function riffOf(chunks: readonly RiffChunk[]): Uint8Array {
  const body = chunks.flatMap(({ id, data }) => {
    const header = new Uint8Array(8);
    header.set(new TextEncoder().encode(id));
    new DataView(header.buffer).setUint32(4, data.length, true);
    return data.length % 2 ? [header, data, new Uint8Array(1)] : [header, data];
  });
  const size = 4 + body.reduce((sum, part) => sum + part.length, 0);
  const head = new Uint8Array(12);
  head.set(new TextEncoder().encode('RIFF'));
  new DataView(head.buffer).setUint32(4, size, true);
  head.set(new TextEncoder().encode('WAVE'), 8);
  return Buffer.concat([head, ...body]);
}

/** A signed WAV's manifest store (its C2PA chunk). */
export const storeOfWav = (wav: Uint8Array): Uint8Array => riffChunks(wav).find((chunk) => chunk.id === 'C2PA')!.data;

/**
 * The same WAV with its manifest store's outer `jumb` box written with a 64-bit size (ISO BMFF
 * `largesize`): the same JUMBF, but its size no longer sits 12 bytes before its description box.
 */
export function withLargeSizeStoreHeader(signedWav: Uint8Array): Uint8Array {
  return riffOf(
    riffChunks(signedWav).map((chunk) => {
      if (chunk.id !== 'C2PA') return chunk;
      const header = new Uint8Array(16);
      const view = new DataView(header.buffer);
      view.setUint32(0, 1);
      header.set(new TextEncoder().encode('jumb'), 4);
      view.setBigUint64(8, BigInt(chunk.data.length + 8));
      return { id: 'C2PA', data: Buffer.concat([header, chunk.data.subarray(8)]) };
    }),
  );
}

/** The same WAV with `decoy` (another, small manifest store) in a `junk` chunk before all others. */
export function withDecoyStore(signedWav: Uint8Array, decoy: Uint8Array): Uint8Array {
  return riffOf([{ id: 'junk', data: decoy }, ...riffChunks(signedWav)]);
}
