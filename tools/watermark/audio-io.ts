/**
 * Audio in and out for the watermark tools, through ffmpeg (the tools only: the codec and the tests
 * never need it). Samples are mono float32 at full scale ±1.
 */
import { execFileSync } from 'node:child_process';

/** Decodes any file ffmpeg reads to mono float32 at `sampleRate` (the file's own rate when omitted). */
export function readAudio(path: string, sampleRate?: number): { samples: Float32Array; sampleRate: number } {
  const rate = sampleRate ?? probeRate(path);
  const raw = execFileSync('ffmpeg', ['-v', 'error', '-i', path, '-ac', '1', '-ar', String(rate), '-f', 'f32le', '-'], {
    maxBuffer: 1 << 30,
  });
  return { samples: new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4).slice(), sampleRate: rate };
}

export function probeRate(path: string): number {
  const out = execFileSync('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'a:0',
    '-show_entries',
    'stream=sample_rate',
    '-of',
    'csv=p=0',
    path,
  ]);
  return Number(out.toString().trim());
}

/** Runs `samples` through an ffmpeg chain: raw float in, `encodeArgs` to a temporary file, decoded back to float at `outRate`. */
export function throughFfmpeg(
  samples: Float32Array,
  sampleRate: number,
  encodeArgs: string[],
  format: string,
  outRate = sampleRate,
): Float32Array {
  const input = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const encoded = execFileSync(
    'ffmpeg',
    ['-v', 'error', '-f', 'f32le', '-ar', String(sampleRate), '-ac', '1', '-i', '-', ...encodeArgs, '-f', format, '-'],
    {
      input,
      maxBuffer: 1 << 30,
    },
  );
  const decoded = execFileSync('ffmpeg', ['-v', 'error', '-i', '-', '-ac', '1', '-ar', String(outRate), '-f', 'f32le', '-'], {
    input: encoded,
    maxBuffer: 1 << 30,
  });
  return new Float32Array(decoded.buffer, decoded.byteOffset, decoded.byteLength / 4).slice();
}

/** A 16-bit PCM WAV of `samples` (clipped to ±1). */
export function pcm16Wav(samples: Float32Array, sampleRate: number): Uint8Array {
  const bytes = new Uint8Array(44 + samples.length * 2);
  const view = new DataView(bytes.buffer);
  const text = (at: number, value: string) => {
    for (let i = 0; i < value.length; i++) bytes[at + i] = value.charCodeAt(i);
  };
  text(0, 'RIFF');
  view.setUint32(4, 36 + samples.length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) view.setInt16(44 + i * 2, Math.round(Math.max(-1, Math.min(1, samples[i]!)) * 32767), true);
  return bytes;
}
