/**
 * Audio container detection from the first bytes. The filename and the client's Content-Type are
 * never trusted: a renamed file must be decoded by what it is, and anything else refused.
 */
export type Container = 'wav' | 'flac' | 'mp3' | 'ogg-opus' | 'ogg-vorbis' | 'webm' | 'm4a';

const ascii = (bytes: Uint8Array, offset: number, text: string): boolean => {
  if (offset + text.length > bytes.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  return true;
};

/** ISO-BMFF major brands of still images (HEIF/AVIF photos share MP4's 'ftyp' box). */
const IMAGE_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1', 'avif', 'avis']);

/** MPEG-1/2/2.5 Layer III frame header with no reserved field values. */
function isMp3FrameHeader(bytes: Uint8Array, offset: number): boolean {
  if (offset + 4 > bytes.length) return false;
  const b1 = bytes[offset + 1]!;
  const b2 = bytes[offset + 2]!;
  const syncOk = bytes[offset] === 0xff && (b1 & 0xe0) === 0xe0;
  const versionOk = ((b1 >> 3) & 0x03) !== 0x01;
  const layerIII = ((b1 >> 1) & 0x03) === 0x01;
  const bitrateIndex = b2 >> 4;
  const sampleRateIndex = (b2 >> 2) & 0x03;
  return syncOk && versionOk && layerIII && bitrateIndex !== 0 && bitrateIndex !== 0x0f && sampleRateIndex !== 0x03;
}

/** The first Ogg page's first packet names the codec. */
function oggCodec(bytes: Uint8Array): Container | undefined {
  const segments = bytes[26];
  if (segments === undefined) return undefined;
  const payload = 27 + segments;
  if (ascii(bytes, payload, 'OpusHead')) return 'ogg-opus';
  if (bytes[payload] === 0x01 && ascii(bytes, payload + 1, 'vorbis')) return 'ogg-vorbis';
  return undefined;
}

export function sniffContainer(bytes: Uint8Array): Container | undefined {
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WAVE')) return 'wav';
  if (ascii(bytes, 0, 'fLaC')) return 'flac';
  if (ascii(bytes, 0, 'OggS')) return oggCodec(bytes);
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return 'webm';
  if (ascii(bytes, 4, 'ftyp')) return IMAGE_BRANDS.has(String.fromCharCode(...bytes.subarray(8, 12))) ? undefined : 'm4a';
  if (ascii(bytes, 0, 'ID3') && bytes.length >= 10) {
    // ID3v2 size is four 7-bit "syncsafe" bytes; the audio starts after the tag (and its footer).
    const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
    const footer = bytes[5]! & 0x10 ? 10 : 0;
    return isMp3FrameHeader(bytes, 10 + size + footer) ? 'mp3' : undefined;
  }
  if (isMp3FrameHeader(bytes, 0)) return 'mp3';
  return undefined;
}
