import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * What the tests read, committed to the repository (`fixtures/README.md` says where each file comes
 * from and under which licence): a clone needs nothing beside it, nor ffmpeg, to run them.
 */
export const fixturesDir = path.join(repoRoot, 'fixtures');
/** Reference filterbank features of three recordings (16 kHz PCM16 WAV). */
export const fbankFixtureDir = path.join(fixturesDir, 'fbank');
/** A few seconds of real speech from a handful of speakers, laid out as the shared dev corpus (`manifest.tsv`, `so762/…`). */
export const speechDir = path.join(fixturesDir, 'speech');
/** The encoded files listed in `audio-fixtures.ts`. */
const audioFixtureDir = path.join(fixturesDir, 'audio');

export const readAudioFixture = (fixture: { file: string }): Uint8Array =>
  new Uint8Array(readFileSync(path.join(audioFixtureDir, fixture.file)));

export interface FbankFixture {
  wav: string;
  sample_rate: number;
  samples: number;
  frames: number;
  bins: number;
  window_type: 'povey' | 'hamming';
  waveform_scale: number;
  frame_length_ms: number;
  frame_shift_ms: number;
  dither: number;
  snip_edges: boolean;
  preemphasis: number;
  remove_dc_offset: boolean;
  files: { raw: string; mean_normalized: string };
}

export function readFbankFixtures(): Record<string, FbankFixture> {
  return JSON.parse(readFileSync(path.join(fbankFixtureDir, 'fixtures.json'), 'utf8'));
}

export function readFloat32File(file: string): Float32Array {
  const bytes = readFileSync(file);
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/** PCM16 mono WAV samples divided by 32768, the way the fixtures were made (independent of the decoder under test). */
export function readPcm16Wav(file: string): Float32Array {
  const bytes = readFileSync(file);
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'data') {
      const count = Math.floor(Math.min(size, bytes.length - offset - 8) / 2);
      const samples = new Float32Array(count);
      for (let i = 0; i < count; i++) samples[i] = bytes.readInt16LE(offset + 8 + 2 * i) / 32768;
      return samples;
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error(`${file}: no data chunk`);
}

/** A 16 kHz mono PCM16 WAV of `samples` (clipped to [-1, 1]): how tests build signals without an encoder. */
export function pcm16Wav(samples: Float32Array): Uint8Array {
  const wav = Buffer.alloc(44 + samples.length * 2);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples.length * 2, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(16000, 24);
  wav.writeUInt32LE(32000, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples.length * 2, 40);
  for (let i = 0; i < samples.length; i++) wav.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32768))), 44 + 2 * i);
  return new Uint8Array(wav);
}

/** `before` seconds of digital silence, then `samples`, then `after` seconds of silence, at 16 kHz. */
export function padWithSilence(samples: Float32Array, before: number, after: number): Float32Array {
  const padded = new Float32Array(Math.round((before + after) * 16000) + samples.length);
  padded.set(samples, Math.round(before * 16000));
  return padded;
}
