/**
 * Makes the test fixtures committed under `fixtures/`, once, from the data shared beside the
 * repository (`../shared`, or VIP_SHARED_DIR). The tests read only what this writes and never run
 * ffmpeg; this script needs it (Debian's ffmpeg: `apt-get install -y ffmpeg`).
 *
 *   npx tsx scripts/make-test-fixtures.ts
 *
 * Run it again only to change the fixtures (an encoder upgrade changes the encoded bytes), then
 * commit what it wrote. `fixtures/README.md` says where each file comes from and under which licence.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AudioFixture, FORMAT_FIXTURES, OTHER_AUDIO_FIXTURES } from '../origin/src/testing/audio-fixtures.js';
import { RECORDED_CONSENT } from '../origin/src/testing/recorded-consent.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sharedDir = process.env.VIP_SHARED_DIR ?? path.resolve(repoRoot, '..', 'shared');
const fixturesDir = path.join(repoRoot, 'fixtures');

/** The reference recording whose filterbank features are kept (all three recordings are kept as WAV). */
const FBANK_FEATURES_OF = 'a';

/**
 * Dev-set recordings (speechocean762, CC BY 4.0) the tests enroll, compare and tell apart: exactly
 * the files they pick (a speaker's longest recordings, the first in the manifest or by name).
 */
const SPEECH = {
  SPEAKER0003: ['000030012', '000030024', '000030040', '000030047', '000030049', '000030051', '000030054', '000030059'],
  SPEAKER0024: [
    '000240010',
    '000240031',
    '000240060',
    '000240071',
    '000240073',
    '000240099',
    '000240115',
    '000240116',
    '000240151',
    '000240152',
  ],
  SPEAKER0049: ['000490002', '000490017', '000490032', '000490047'],
  SPEAKER0093: ['000930005', '000930014', '000930018', '000930026'],
  SPEAKER0111: ['001110009', '001110023', '001110039', '001110040'],
  SPEAKER9601: ['096010009', '096010020', '096010029'],
  SPEAKER9612: ['096120003'],
  SPEAKER9622: ['096220004', '096220005', '096220008', '096220012', '096220014', '096220025'],
  SPEAKER9623: ['096230020'],
  SPEAKER9633: ['096330019', '096330021', '096330022', '096330023', '096330024', '096330026'],
  // The speaker of the spoken consent committed under fixtures/spoken-consent/ (scripts/make-consent-fixtures.ts).
  SPEAKER2007: [...RECORDED_CONSENT.enrollmentClips],
} satisfies Record<string, string[]>;

/**
 * Speakers the screening, licence-loop and review tests take by rank: their N longest dev recordings
 * (longest first, as `speakerRecordings` orders them), beyond any named above.
 */
const LONGEST: Record<string, number> = {
  'so762:SPEAKER9608': 3,
  'so762:SPEAKER9612': 9,
  'so762:SPEAKER9623': 5,
  'so762:SPEAKER9640': 3,
  'dsp20:16307130260': 1,
};

function copyFbank(): void {
  const from = path.join(sharedDir, 'fixtures', 'fbank');
  const to = path.join(fixturesDir, 'fbank');
  mkdirSync(to, { recursive: true });
  const all: Record<string, { wav: string; files: Record<string, string> }> = JSON.parse(
    readFileSync(path.join(from, 'fixtures.json'), 'utf8'),
  );
  const kept = Object.fromEntries(Object.entries(all).filter(([, fixture]) => fixture.wav === `${FBANK_FEATURES_OF}.wav`));
  for (const name of ['a.wav', 'b.wav', 'c.wav', ...Object.values(kept).flatMap((fixture) => Object.values(fixture.files))]) {
    copyFileSync(path.join(from, name), path.join(to, name));
  }
  writeFileSync(path.join(to, 'fixtures.json'), `${JSON.stringify(kept, null, 2)}\n`);
}

function copySpeech(): void {
  const from = path.join(sharedDir, 'speech', 'dev');
  const to = path.join(fixturesDir, 'speech');
  const wanted = new Set(Object.entries(SPEECH).flatMap(([speaker, clips]) => clips.map((clip) => `so762/${speaker}/${clip}.opus`)));
  const [header, ...rows] = readFileSync(path.join(from, 'manifest.tsv'), 'utf8').trim().split('\n');
  for (const [speaker, count] of Object.entries(LONGEST)) {
    const cells = rows.map((row) => row.split('\t')).filter((row) => row[2] === speaker);
    cells.sort((a, b) => Number(b[3]) - Number(a[3]) || a[0]!.localeCompare(b[0]!));
    for (const row of cells.slice(0, count)) wanted.add(row[0]!);
  }
  const kept = rows.filter((row) => wanted.has(row.split('\t')[0]!));
  if (kept.length !== wanted.size) throw new Error(`${wanted.size - kept.length} of the listed recordings are not in the dev manifest`);
  for (const row of kept) {
    const file = row.split('\t')[0]!;
    mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
    copyFileSync(path.join(from, file), path.join(to, file));
  }
  writeFileSync(path.join(to, 'manifest.tsv'), `${[header, ...kept].join('\n')}\n`);
  // DSPSpeech-20 is MIT-licensed: its notice travels with its recordings.
  copyFileSync(path.join(sharedDir, 'speech', 'licenses', 'DSPSpeech-20.LICENSE.txt'), path.join(to, 'dsp20', 'LICENSE.txt'));
}

function encode(fixture: AudioFixture): void {
  const inputs = fixture.inputs.flatMap((input) => [
    ...(fixture.inputArgs ?? []),
    '-i',
    fixture.inputArgs ? input : path.join(fixturesDir, input),
  ]);
  // bitexact and no metadata: the same ffmpeg writes the same bytes, so a rerun shows no spurious diff.
  execFileSync(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      ...inputs,
      ...fixture.outputArgs,
      '-map_metadata',
      '-1',
      '-fflags',
      '+bitexact',
      '-flags:a',
      '+bitexact',
      path.join(fixturesDir, 'audio', fixture.file),
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
}

for (const folder of ['fbank', 'speech', 'audio']) rmSync(path.join(fixturesDir, folder), { recursive: true, force: true });
copyFbank();
copySpeech();
mkdirSync(path.join(fixturesDir, 'audio'), { recursive: true });
for (const fixture of [...FORMAT_FIXTURES, ...Object.values(OTHER_AUDIO_FIXTURES)]) encode(fixture);
console.log(`fixtures written to ${path.relative(process.cwd(), fixturesDir) || '.'}`);
