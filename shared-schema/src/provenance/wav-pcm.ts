/**
 * The samples of a PCM or IEEE-float WAV, read as float channels and written back into the same
 * file: every chunk but the samples of `data` stays byte for byte (LIST, bext, a manifest store), so
 * the file keeps its layout, sample rate and bit depth. The watermark's WAV path reads and writes
 * through here; other encodings (A-law, ADPCM, …) are for the platform to decode and mark as PCM.
 */

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_IEEE_FLOAT = 3;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

export interface WavPcm {
  sampleRate: number;
  /** One array per channel, at full scale ±1. */
  channels: Float32Array[];
  encoding: 'int' | 'float';
  bitsPerSample: 8 | 16 | 24 | 32 | 64;
  /** Where the samples lie in the file: [start, end) of the `data` chunk's body, whole frames only. */
  dataSpan: [number, number];
}

const fourcc = (bytes: Uint8Array, at: number) => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);

/** Reads `bytes` as a PCM or float WAV. Throws a TypeError on anything else (another codec, a broken header). */
export function readWavPcm(bytes: Uint8Array): WavPcm {
  if (bytes.length < 12 || fourcc(bytes, 0) !== 'RIFF' || fourcc(bytes, 8) !== 'WAVE') throw new TypeError('not a RIFF/WAVE file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let format: { tag: number; channels: number; sampleRate: number; blockAlign: number; bits: number } | undefined;
  let data: [number, number] | undefined;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = fourcc(bytes, at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'fmt ' && size >= 16 && body + 16 <= bytes.length) {
      let tag = view.getUint16(body, true);
      if (tag === WAVE_FORMAT_EXTENSIBLE && size >= 40 && body + 26 <= bytes.length) tag = view.getUint16(body + 24, true);
      format = {
        tag,
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        blockAlign: view.getUint16(body + 12, true),
        bits: view.getUint16(body + 14, true),
      };
    } else if (id === 'data') {
      data = [body, Math.min(body + size, bytes.length)];
    }
    at = body + size + (size & 1);
  }
  if (!format || !data) throw new TypeError('the WAV has no fmt or no data chunk');
  const encoding = format.tag === WAVE_FORMAT_PCM ? 'int' : format.tag === WAVE_FORMAT_IEEE_FLOAT ? 'float' : undefined;
  const bitsOk = encoding === 'int' ? [8, 16, 24, 32].includes(format.bits) : format.bits === 32 || format.bits === 64;
  if (!encoding || !bitsOk) throw new TypeError('the WAV is neither integer PCM (8–32 bits) nor IEEE float (32, 64 bits)');
  const bytesPerSample = format.bits / 8;
  if (format.channels < 1 || format.blockAlign !== format.channels * bytesPerSample || format.sampleRate < 1) {
    throw new TypeError('the WAV format chunk does not add up');
  }
  const frames = Math.floor((data[1] - data[0]) / format.blockAlign);
  const channels = Array.from({ length: format.channels }, () => new Float32Array(frames));
  const read = sampleReader(view, encoding, format.bits);
  for (let frame = 0; frame < frames; frame++) {
    for (let channel = 0; channel < format.channels; channel++) {
      channels[channel]![frame] = read(data[0] + frame * format.blockAlign + channel * bytesPerSample);
    }
  }
  return {
    sampleRate: format.sampleRate,
    channels,
    encoding,
    bitsPerSample: format.bits as WavPcm['bitsPerSample'],
    dataSpan: [data[0], data[0] + frames * format.blockAlign],
  };
}

/**
 * A copy of the file `wav` was read from with its samples replaced by `channels` (as many, as
 * long), in the file's own encoding: integers rounded and clipped to their range, floats as they are.
 */
export function writeWavPcm(bytes: Uint8Array, wav: WavPcm, channels: readonly Float32Array[]): Uint8Array {
  const frames = wav.channels[0]?.length ?? 0;
  if (channels.length !== wav.channels.length || channels.some((channel) => channel.length !== frames)) {
    throw new RangeError('the samples to write do not have the WAV’s channels and length');
  }
  const out = Uint8Array.from(bytes);
  const view = new DataView(out.buffer);
  const bytesPerSample = wav.bitsPerSample / 8;
  const blockAlign = bytesPerSample * channels.length;
  const write = sampleWriter(view, wav.encoding, wav.bitsPerSample);
  for (let frame = 0; frame < frames; frame++) {
    for (let channel = 0; channel < channels.length; channel++) {
      write(wav.dataSpan[0] + frame * blockAlign + channel * bytesPerSample, channels[channel]![frame]!);
    }
  }
  return out;
}

function sampleReader(view: DataView, encoding: 'int' | 'float', bits: number): (at: number) => number {
  if (encoding === 'float') return bits === 32 ? (at) => view.getFloat32(at, true) : (at) => view.getFloat64(at, true);
  switch (bits) {
    case 8:
      return (at) => (view.getUint8(at) - 128) / 128;
    case 16:
      return (at) => view.getInt16(at, true) / 32768;
    case 24:
      return (at) => ((view.getUint8(at + 2) << 24) | (view.getUint8(at + 1) << 16) | (view.getUint8(at) << 8)) / 2 ** 31;
    default:
      return (at) => view.getInt32(at, true) / 2 ** 31;
  }
}

function sampleWriter(view: DataView, encoding: 'int' | 'float', bits: number): (at: number, value: number) => void {
  if (encoding === 'float') {
    return bits === 32 ? (at, value) => view.setFloat32(at, value, true) : (at, value) => view.setFloat64(at, value, true);
  }
  const scale = 2 ** (bits - 1);
  const quantize = (value: number) => Math.max(-scale, Math.min(scale - 1, Math.round(value * scale)));
  switch (bits) {
    case 8:
      return (at, value) => view.setUint8(at, quantize(value) + 128);
    case 16:
      return (at, value) => view.setInt16(at, quantize(value), true);
    case 24:
      return (at, value) => {
        const sample = quantize(value);
        view.setUint8(at, sample & 0xff);
        view.setUint8(at + 1, (sample >> 8) & 0xff);
        view.setUint8(at + 2, (sample >> 16) & 0xff);
      };
    default:
      return (at, value) => view.setInt32(at, quantize(value), true);
  }
}
