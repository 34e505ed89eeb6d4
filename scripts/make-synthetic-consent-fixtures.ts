/**
 * Makes the synthetic spoken consents committed under fixtures/spoken-consent/synthetic/: for each
 * voice of SYNTHETIC_VOICES (origin/src/testing/synthetic-consent.ts), Debian's flite or festival
 * reads the statement, its negation, another text, each digit zero to nine alone and the voice's
 * enrollment sentences; each is trimmed of leading and trailing silence and written as 16 kHz mono
 * Ogg Opus at 32 kbps (as fixtures/speech/ is: PCM16 WAV would be about 4 MB in all). Needs flite,
 * festival with festvox-us-slt-hts, and ffmpeg; the tests read only what it writes:
 *
 *   apt-get install -y flite festival festvox-us-slt-hts ffmpeg
 *   npx tsx scripts/make-synthetic-consent-fixtures.ts
 *
 * The same tools write the same bytes (bit-exact encoder, no metadata); rerun it when the statement
 * changes, and commit what it wrote.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PHRASE_WORDS } from '../origin/src/spoken-consent/consent-words.js';
import {
  SYNTHETIC_CONSENT_TEXTS,
  SYNTHETIC_ENROLLMENT_TEXTS,
  SYNTHETIC_VOICES,
  type SyntheticVoice,
  syntheticConsentDir,
} from '../origin/src/testing/synthetic-consent.js';

const work = mkdtempSync(path.join(tmpdir(), 'vip-synthetic-consent-'));
/** Below this level (dBFS) the synthesizers' lead-in and tail count as silence. */
const SILENCE_DB = -50;

/** The synthesizer's own WAV of `text` (flite: 16 kHz; festival's HTS voice: 32 kHz). */
function speak(voice: SyntheticVoice, text: string): string {
  const { synthesizer, voice: name } = SYNTHETIC_VOICES[voice];
  const wav = path.join(work, 'spoken.wav');
  if (synthesizer === 'festival') {
    writeFileSync(`${wav}.txt`, text);
    execFileSync('text2wave', ['-eval', `(voice_${name})`, `${wav}.txt`, '-o', wav]);
  } else execFileSync('flite', ['-voice', name, '-t', text, '-o', wav]);
  return wav;
}

/** Silence trimmed at both ends (silenceremove on the audio and on its reverse), 16 kHz mono Opus. */
function write(voice: SyntheticVoice, name: string, text: string) {
  const trim = `silenceremove=start_periods=1:start_threshold=${SILENCE_DB}dB`;
  execFileSync('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-i',
    speak(voice, text),
    '-af',
    `${trim},areverse,${trim},areverse`,
    '-ac',
    '1',
    '-ar',
    '16000',
    '-c:a',
    'libopus',
    '-b:a',
    '32k',
    '-map_metadata',
    '-1',
    '-fflags',
    '+bitexact',
    '-flags:a',
    '+bitexact',
    path.join(syntheticConsentDir(voice), `${name}.opus`),
  ]);
}

for (const voice of Object.keys(SYNTHETIC_VOICES) as SyntheticVoice[]) {
  rmSync(syntheticConsentDir(voice), { recursive: true, force: true });
  mkdirSync(syntheticConsentDir(voice), { recursive: true });
  for (const [reading, text] of Object.entries(SYNTHETIC_CONSENT_TEXTS)) write(voice, reading, text);
  for (const digit of PHRASE_WORDS) write(voice, digit, digit);
  for (const [index, text] of SYNTHETIC_ENROLLMENT_TEXTS.entries()) write(voice, `enroll-${index + 1}`, text);
  console.log(`${voice} written to ${path.relative(process.cwd(), syntheticConsentDir(voice))}`);
}
rmSync(work, { recursive: true, force: true });
