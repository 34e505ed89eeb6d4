/**
 * Makes fixtures/watermark/: marked speech and attacked copies of it, for the test that reads them
 * back through the service's own decoder (origin/src/provenance/watermark-fixtures.test.ts) with no
 * ffmpeg. Needs ffmpeg, flite and festival; run once, commit what it writes:
 *
 *   npx tsx tools/watermark/make-fixtures.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { concatSamples as concat } from '../../shared-schema/src/testing/speech-like.js';
import { markPcm, WATERMARK_ALGORITHM } from '../../shared-schema/src/watermark/index.js';
import { repositoryRoot } from '../../test/support/repository.js';
import { readAudio } from './audio-io.js';

const out = join(repositoryRoot, 'fixtures/watermark');
const work = mkdtempSync(join(tmpdir(), 'vip-watermark-fixtures-'));
mkdirSync(out, { recursive: true });

const ID_A = 'a1b2c3d4e5';
const ID_B = '0f1e2d3c4b';

function speak(voice: string, text: string, rate: number): Float32Array {
  const path = join(work, `${voice}.wav`);
  if (voice === 'festival') {
    writeFileSync(`${path}.txt`, text);
    execFileSync('text2wave', ['-eval', '(voice_cmu_us_slt_arctic_hts)', `${path}.txt`, '-o', path]);
  } else execFileSync('flite', ['-voice', voice, '-t', text, '-o', path]);
  return readAudio(path, rate).samples;
}

/** Writes `samples` through ffmpeg with `args` (bit-exact encoders, no metadata) to fixtures/watermark/`name`. */
function write(name: string, samples: Float32Array, rate: number, args: string[]) {
  const raw = join(work, `${name}.f32`);
  writeFileSync(raw, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
  execFileSync('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'f32le',
    '-ar',
    String(rate),
    '-ac',
    '1',
    '-i',
    raw,
    '-map_metadata',
    '-1',
    '-fflags',
    '+bitexact',
    '-flags:a',
    '+bitexact',
    ...args,
    join(out, name),
  ]);
}

// a: flite's slt at 16 kHz, 6 s or so
const rateA = 16_000;
const a = speak('slt', 'Every synthesis of a protected voice needs the consent of its owner, and that consent can be withdrawn.', rateA);
const markedA = markPcm(a, rateA, { alg: WATERMARK_ALGORITHM, id: ID_A });
write('a.marked.flac', markedA, rateA, ['-c:a', 'flac', '-sample_fmt', 's16']);
write('a.mp3-64k.mp3', markedA, rateA, ['-c:a', 'libmp3lame', '-b:a', '64k']);
write('a.opus-32k.opus', markedA, rateA, ['-ar', '48000', '-c:a', 'libopus', '-b:a', '32k']);
write('a.aac-96k.m4a', markedA, rateA, ['-c:a', 'aac', '-b:a', '96k']);
write('a.8khz.flac', markedA, rateA, ['-ar', '8000', '-c:a', 'flac', '-sample_fmt', 's16']);
write('a.unmarked.opus', a, rateA, ['-ar', '48000', '-c:a', 'libopus', '-b:a', '32k']);
const other = speak('rms', 'The weather will be cloudy in the morning, with light rain from the west.', rateA);
write('a.inserted.mp3', concat(other.subarray(0, Math.round(3.7 * rateA)), markedA, other.subarray(Math.round(1.2 * rateA))), rateA, [
  '-c:a',
  'libmp3lame',
  '-b:a',
  '64k',
]);

// b: festival's HTS voice at 24 kHz, a longer file; a 5 s window cut from it at 3.1 s, then MP3 64 kbps
const rateB = 24_000;
const b = speak(
  'festival',
  'The quick brown fox jumps over the lazy dog. Please call me back on five five five, two three four, nine eight seven six before noon.',
  rateB,
);
const markedB = markPcm(b, rateB, { alg: WATERMARK_ALGORITHM, id: ID_B });
const start = Math.round(3.1 * rateB);
write('b.cut-5s.mp3', markedB.slice(start, start + 5 * rateB), rateB, ['-c:a', 'libmp3lame', '-b:a', '64k']);

const manifest = {
  algorithm: WATERMARK_ALGORITHM,
  files: [
    { file: 'a.marked.flac', id: ID_A, what: 'flite slt, 16 kHz, marked (lossless)' },
    { file: 'a.mp3-64k.mp3', id: ID_A, what: 'the same, MP3 64 kbps' },
    { file: 'a.opus-32k.opus', id: ID_A, what: 'the same, Opus 32 kbps (48 kHz)' },
    { file: 'a.aac-96k.m4a', id: ID_A, what: 'the same, AAC 96 kbps' },
    { file: 'a.8khz.flac', id: ID_A, what: 'the same, resampled to 8 kHz' },
    { file: 'a.inserted.mp3', id: ID_A, what: 'the same between 3.7 s and 3.5 s of unmarked flite rms, MP3 64 kbps' },
    { file: 'b.cut-5s.mp3', id: ID_B, what: 'festival cmu_us_slt_arctic_hts at 24 kHz, marked, 5 s cut at 3.1 s, MP3 64 kbps' },
    { file: 'a.unmarked.opus', id: null, what: 'the unmarked original of a, Opus 32 kbps: must read nothing' },
  ],
};
writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`wrote ${manifest.files.length} files to ${out}`);
