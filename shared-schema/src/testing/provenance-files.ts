import type { PlatformSigner } from '../client/provenance.js';
import type { ProvenanceMimeType } from '../provenance.js';
import { testCertificateAuthority, testLeafCertificate } from './provenance-ca.js';

/** The committed fixtures (fixtures/audio) of one utterance in the three containers Content Credentials are written into. */
export const CREDENTIAL_FORMATS: { name: string; file: string; mime: ProvenanceMimeType }[] = [
  { name: 'WAV', file: 'a.pcm16.wav', mime: 'audio/wav' },
  { name: 'MP3', file: 'a.mp3', mime: 'audio/mpeg' },
  { name: 'M4A', file: 'a.m4a', mime: 'audio/mp4' },
];

/** A platform's signing credentials, from a CA made here: the CA is what it registers, the leaf signs. */
export function platformSigner(platformName: string): { caPem: string; leafPem: string; signer: PlatformSigner } {
  const ca = testCertificateAuthority(`${platformName} Content Credentials CA`, platformName);
  const leaf = testLeafCertificate({ commonName: `${platformName} signer`, organization: platformName, issuer: ca });
  return { caPem: ca.pem, leafPem: leaf.pem, signer: { certificateChain: [leaf.pem, ca.pem], privateKey: leaf.privateKey } };
}

/** Where a byte of audio (not of the manifest) sits: halfway through the part of the file the manifest leaves. */
export function audioByteOffset(signed: Uint8Array): number {
  const marker = new TextEncoder().encode('jumb');
  let manifestAt = -1;
  for (let at = 0; at < signed.length - 4 && manifestAt < 0; at++) {
    if (marker.every((byte, offset) => signed[at + offset] === byte)) manifestAt = at;
  }
  return manifestAt > signed.length / 2 ? Math.floor(manifestAt / 2) : Math.floor((manifestAt + signed.length) / 2 + 1_000);
}

/** The same bytes with one byte of `text` (found in the file) changed, length kept. */
export function editText(signed: Uint8Array, text: string, replacement: string): Uint8Array {
  const haystack = Buffer.from(signed);
  const at = haystack.indexOf(text);
  if (at < 0 || replacement.length !== text.length) throw new Error(`"${text}" is not in the file`);
  const edited = Uint8Array.from(signed);
  edited.set(Buffer.from(replacement), at);
  return edited;
}
