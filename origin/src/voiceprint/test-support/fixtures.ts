import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/** The read-only data shared beside the repository (fixtures, speech corpus). */
export const sharedDir = process.env.VIP_SHARED_DIR ?? path.resolve(repoRoot, '..', 'shared');
export const fbankFixtureDir = path.join(sharedDir, 'fixtures', 'fbank');
export const speechDir = path.join(sharedDir, 'speech');

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
