import { ProblemError } from '@vip/shared-schema/problem';
import decode from 'audio-decode';
import { type Container, sniffContainer } from './container.js';
import { createResampler, type Resampler, type ResamplerEngine } from './resample.js';

/** Every decoded file's rate: what the VAD, the speaker model and the watermark detector read. */
export const DECODED_SAMPLE_RATE = 16000;

export interface DecodeLimits {
  maxBytes: number;
  maxSeconds: number;
  /** Shorter audio cannot hold a usable voiceprint. */
  minSeconds: number;
}

export interface DecodedAudio {
  /** Mono, 16 kHz, [-1, 1]. */
  samples: Float32Array;
  container: Container;
  sourceSampleRate: number;
  channels: number;
  durationSeconds: number;
  /** Share of source frames where some channel sits at full scale. */
  clippingRatio: number;
}

const DECODER_NAME: Record<Container, keyof typeof decode> = {
  wav: 'wav',
  flac: 'flac',
  mp3: 'mp3',
  'ogg-opus': 'opus',
  'ogg-vorbis': 'oga',
  webm: 'webm',
  m4a: 'm4a',
};

/**
 * Compressed input is fed in small pieces because one piece can expand enormously (a FLAC block of
 * digital silence is a few bytes for 65k samples): the duration limit is then enforced before a
 * hostile file can grow the decoded audio far past it. PCM expands at most 4x, so WAV goes in big.
 */
const COMPRESSED_CHUNK_BYTES = 4096;
const PCM_CHUNK_BYTES = 1 << 20;
const MIN_SOURCE_RATE = 4000;
const MAX_SOURCE_RATE = 192000;
const MAX_CHANNELS = 32;
const CLIPPING_LEVEL = 0.999;

interface StreamDecoder {
  (chunk?: Uint8Array): Promise<{ channelData: Float32Array[]; sampleRate: number }>;
  free(): void;
}

/** Collects the decoder's output as mono 16 kHz while it streams, and watches the limits. */
class MonoAccumulator {
  sourceSampleRate = 0;
  channels = 0;
  sourceFrames = 0;
  clippedFrames = 0;
  private resampler: Resampler | undefined;
  private readonly pieces: Float32Array[] = [];

  constructor(
    private readonly maxSeconds: number,
    private readonly resamplerEngine: ResamplerEngine,
  ) {}

  async add(channelData: Float32Array[], sampleRate: number): Promise<void> {
    const frames = channelData[0]?.length ?? 0;
    if (frames === 0) return;
    if (this.sourceSampleRate === 0) {
      if (!(sampleRate >= MIN_SOURCE_RATE && sampleRate <= MAX_SOURCE_RATE)) {
        throw new ProblemError('corrupt_audio', `The audio declares an implausible sample rate (${sampleRate} Hz).`);
      }
      if (channelData.length > MAX_CHANNELS) throw new ProblemError('corrupt_audio', `The audio declares ${channelData.length} channels.`);
      this.sourceSampleRate = sampleRate;
      this.channels = channelData.length;
      this.resampler =
        sampleRate === DECODED_SAMPLE_RATE
          ? undefined
          : await createResampler(sampleRate, DECODED_SAMPLE_RATE, { engine: this.resamplerEngine });
    } else if (sampleRate !== this.sourceSampleRate) {
      throw new ProblemError('corrupt_audio', 'The sample rate changes inside the file.');
    }
    this.sourceFrames += frames;
    if (this.sourceFrames > this.maxSeconds * this.sourceSampleRate) {
      throw new ProblemError('too_long', `The audio is longer than ${this.maxSeconds} seconds.`);
    }
    const mono = this.downmix(channelData, frames);
    this.pieces.push(this.resampler ? this.resampler.process(mono) : mono);
  }

  private downmix(channelData: Float32Array[], frames: number): Float32Array {
    const mono = new Float32Array(frames);
    const scale = 1 / channelData.length;
    for (let i = 0; i < frames; i++) {
      let sum = 0;
      let clipped = false;
      for (const channel of channelData) {
        const sample = channel[i] ?? 0;
        if (!Number.isFinite(sample)) throw new ProblemError('corrupt_audio', 'The audio holds samples that are not numbers.');
        if (Math.abs(sample) >= CLIPPING_LEVEL) clipped = true;
        sum += sample;
      }
      if (clipped) this.clippedFrames++;
      mono[i] = sum * scale;
    }
    return mono;
  }

  finish(): Float32Array {
    if (this.resampler) {
      this.pieces.push(this.resampler.flush());
      this.resampler.destroy();
    }
    const total = this.pieces.reduce((sum, piece) => sum + piece.length, 0);
    const samples = new Float32Array(total);
    let offset = 0;
    for (const piece of this.pieces) {
      samples.set(piece, offset);
      offset += piece.length;
    }
    return samples;
  }

  dispose(): void {
    this.resampler?.destroy();
  }
}

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_IEEE_FLOAT = 3;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

/**
 * The WAV decoder trusts the header's channel count and block size: a corrupt one (40,000
 * channels of 4-byte blocks) would make it loop over billions of samples. Only PCM and float
 * WAV are accepted, with a header that adds up.
 */
function checkWavFormat(bytes: Uint8Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = String.fromCharCode(...bytes.subarray(offset, offset + 4));
    const size = view.getUint32(offset + 4, true);
    if (id === 'fmt ') {
      if (size < 16 || offset + 24 > bytes.length) break;
      let tag = view.getUint16(offset + 8, true);
      if (tag === WAVE_FORMAT_EXTENSIBLE && size >= 40 && offset + 34 <= bytes.length) tag = view.getUint16(offset + 32, true);
      const channels = view.getUint16(offset + 10, true);
      const blockAlign = view.getUint16(offset + 20, true);
      const bits = view.getUint16(offset + 22, true);
      if (tag !== WAVE_FORMAT_PCM && tag !== WAVE_FORMAT_IEEE_FLOAT) {
        throw new ProblemError('unsupported_format', 'Only PCM and floating-point WAV files are accepted.');
      }
      const validBits = tag === WAVE_FORMAT_PCM ? [8, 16, 24, 32].includes(bits) : bits === 32 || bits === 64;
      if (channels < 1 || channels > MAX_CHANNELS || !validBits || blockAlign !== (channels * bits) / 8) {
        throw new ProblemError('corrupt_audio', 'The WAV header is inconsistent.');
      }
      return;
    }
    offset += 8 + size + (size % 2);
  }
  throw new ProblemError('corrupt_audio', 'The WAV file has no readable format header.');
}

/**
 * Bytes of an uploaded file to mono 16 kHz audio. Every failure is a ProblemError whose code says
 * what is wrong with the file; nothing else escapes.
 */
export async function decodeAudio(
  bytes: Uint8Array,
  limits: DecodeLimits,
  options: { resampler?: ResamplerEngine } = {},
): Promise<DecodedAudio> {
  if (bytes.length === 0) throw new ProblemError('empty_audio', 'The audio file is empty.');
  if (bytes.length > limits.maxBytes)
    throw new ProblemError('payload_too_large', `The audio file is larger than ${limits.maxBytes} bytes.`);
  const container = sniffContainer(bytes);
  if (!container) {
    throw new ProblemError('unsupported_format', 'The file is not WAV, FLAC, MP3, Ogg Opus/Vorbis, WebM or M4A audio.');
  }
  if (container === 'wav') checkWavFormat(bytes);
  const accumulator = new MonoAccumulator(limits.maxSeconds, options.resampler ?? 'auto');
  let decoder: StreamDecoder | undefined;
  try {
    const createDecoder = decode[DECODER_NAME[container]] as () => Promise<StreamDecoder>;
    decoder = await createDecoder();
    const chunkBytes = container === 'wav' ? PCM_CHUNK_BYTES : COMPRESSED_CHUNK_BYTES;
    for (let offset = 0; offset < bytes.length; offset += chunkBytes) {
      const output = await decoder(bytes.subarray(offset, offset + chunkBytes));
      await accumulator.add(output.channelData, output.sampleRate);
    }
    const tail = await decoder();
    decoder = undefined; // the end-of-stream call frees it
    await accumulator.add(tail.channelData, tail.sampleRate);
  } catch (error) {
    decoder?.free();
    accumulator.dispose();
    if (error instanceof ProblemError) throw error;
    throw new ProblemError('corrupt_audio', `The ${container} file could not be decoded.`);
  }
  if (accumulator.sourceFrames === 0) throw new ProblemError('empty_audio', 'The file holds no audio samples.');
  const durationSeconds = accumulator.sourceFrames / accumulator.sourceSampleRate;
  if (durationSeconds < limits.minSeconds) {
    accumulator.dispose();
    throw new ProblemError('too_short', `The audio lasts ${durationSeconds.toFixed(2)} s; at least ${limits.minSeconds} s is needed.`);
  }
  return {
    samples: accumulator.finish(),
    container,
    sourceSampleRate: accumulator.sourceSampleRate,
    channels: accumulator.channels,
    durationSeconds,
    clippingRatio: accumulator.clippedFrames / accumulator.sourceFrames,
  };
}
