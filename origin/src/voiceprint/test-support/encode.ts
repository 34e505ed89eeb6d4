import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Test inputs are made at test time with Debian's ffmpeg (a test dependency, never a runtime one):
 * a missing ffmpeg must fail the suite loudly rather than skip the format tests.
 */
export function requireFfmpeg(): void {
  try {
    execFileSync('ffmpeg', ['-version'], { stdio: 'ignore' });
  } catch {
    throw new Error('ffmpeg is required by the voiceprint decoder tests (apt-get install -y ffmpeg)');
  }
}

export interface Encoding {
  name: string;
  extension: string;
  args: string[];
}

/** One entry per format the service accepts, with the codec options that exercise it. */
export const ENCODINGS: Encoding[] = [
  { name: 'wav pcm16', extension: 'wav', args: ['-c:a', 'pcm_s16le'] },
  { name: 'wav pcm24 (extensible)', extension: 'wav', args: ['-c:a', 'pcm_s24le'] },
  { name: 'wav pcm32', extension: 'wav', args: ['-c:a', 'pcm_s32le'] },
  { name: 'wav float32', extension: 'wav', args: ['-c:a', 'pcm_f32le'] },
  { name: 'flac', extension: 'flac', args: ['-c:a', 'flac'] },
  { name: 'mp3', extension: 'mp3', args: ['-c:a', 'libmp3lame', '-b:a', '128k'] },
  { name: 'ogg opus', extension: 'opus', args: ['-c:a', 'libopus', '-b:a', '64k'] },
  { name: 'ogg vorbis', extension: 'ogg', args: ['-c:a', 'libvorbis', '-q:a', '5'] },
  { name: 'webm opus', extension: 'webm', args: ['-c:a', 'libopus', '-b:a', '64k'] },
  { name: 'm4a aac', extension: 'm4a', args: ['-c:a', 'aac', '-b:a', '128k'] },
];

export class TempDir {
  readonly path = mkdtempSync(path.join(tmpdir(), 'vip-voiceprint-'));

  file(name: string): string {
    return path.join(this.path, name);
  }

  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

/** Runs ffmpeg on `input` with extra output options and returns the bytes written. */
export function ffmpeg(input: string, output: string, outputArgs: string[], inputArgs: string[] = []): Uint8Array {
  execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...inputArgs, '-i', input, ...outputArgs, output], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Uint8Array(readFileSync(output));
}
