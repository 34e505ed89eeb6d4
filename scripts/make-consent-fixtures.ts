/**
 * Makes the recorded spoken consent committed under fixtures/spoken-consent/: one real speaker of
 * speechocean762 (dev half, so762:SPEAKER2007) saying the consent statement, the statement with
 * "not" inserted, and six digits, each word cut from that speaker's own read sentences at the
 * boundaries PocketSphinx aligns to their transcripts. Needs ../shared (or
 * VIP_SHARED_DIR); the tests read only what it writes:
 *
 *   npx tsx scripts/make-consent-fixtures.ts
 *
 * It cuts the statement of spoken-en-2, whose words were chosen so that one speaker of the corpus says
 * every one of them (docs/DECISIONS.md#spoken-consent); later statements are read by the synthetic
 * voices of scripts/make-synthetic-consent-fixtures.ts.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { limits, SPOKEN_CONSENT_STATEMENTS } from '@vip/shared-schema';
import { spokenWords } from '../origin/src/spoken-consent/consent-words.js';
import { WordsChecker } from '../origin/src/spoken-consent/words.js';
import { pcm16Wav } from '../origin/src/testing/fixtures.js';
import { joined, RECORDED_CONSENT, recordedConsentDir } from '../origin/src/testing/recorded-consent.js';
import { decodeAudio } from '../origin/src/voiceprint/decode.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sharedDir = process.env.VIP_SHARED_DIR ?? path.resolve(repoRoot, '..', 'shared');
const corpusDir = path.join(sharedDir, 'speech', 'dev');
const SAMPLE_RATE = 16000;
/**
 * Silence between the cut words: with it the decoder finds each word's edges again (a statement
 * joined without pauses was heard as "it is not me here ...").
 */
const WORD_GAP_SECONDS = 0.1;

/**
 * The speaker's recordings the words are cut from, in order of preference. The enrollment clips
 * (RECORDED_CONSENT.enrollmentClips) are not among them, so the consent recording and the enrollment
 * share no audio.
 */
const SOURCES = ['020070165', '020070146', '020070157', '020070132', '020070152', '020070039', '020070050'];

const transcripts = new Map(
  readFileSync(path.join(corpusDir, 'transcripts.tsv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split('\t') as [string, string]),
);

const audioOf = async (clip: string) =>
  (
    await decodeAudio(readFileSync(path.join(corpusDir, 'so762', 'SPEAKER2007', `${clip}.opus`)), {
      maxBytes: limits.audioMaxBytes,
      maxSeconds: 60,
      minSeconds: 0,
    })
  ).samples;

const checker = await WordsChecker.create();
/** Every word of every source as cut audio (PocketSphinx's alignment to the transcript), first source first. */
const words = new Map<string, Float32Array>();
for (const clip of SOURCES) {
  const text = transcripts.get(`so762/SPEAKER2007/${clip}.opus`);
  if (!text) throw new Error(`${clip} has no transcript`);
  const samples = await audioOf(clip);
  for (const aligned of checker.align(samples, text)) {
    if (!words.has(aligned.word)) words.set(aligned.word, faded(samples.slice(secondsToIndex(aligned.start), secondsToIndex(aligned.end))));
  }
}
checker.close();

const wordAudio = (word: string) => {
  const audio = words.get(word);
  if (!audio) throw new Error(`${RECORDED_CONSENT.speaker} never says "${word}" in the source recordings`);
  return audio;
};

mkdirSync(recordedConsentDir, { recursive: true });
const write = (name: string, samples: Float32Array) => writeFileSync(path.join(recordedConsentDir, name), pcm16Wav(samples));
write(RECORDED_CONSENT.statement, joinWords(spokenWords(SPOKEN_CONSENT_STATEMENTS[RECORDED_CONSENT.statementVersion].text).map(wordAudio)));
write(RECORDED_CONSENT.negatedStatement, joinWords(spokenWords(RECORDED_CONSENT.negatedText).map(wordAudio)));
for (const digit of RECORDED_CONSENT.digits) write(`${digit}.wav`, wordAudio(digit));
console.log(`spoken consent of ${RECORDED_CONSENT.speaker} written to ${path.relative(process.cwd(), recordedConsentDir)}`);

/** 10 ms fades, so that cut words do not click. */
function faded(samples: Float32Array): Float32Array {
  const ramp = Math.min(160, Math.floor(samples.length / 2));
  for (let i = 0; i < ramp; i++) {
    samples[i]! *= i / ramp;
    samples[samples.length - 1 - i]! *= i / ramp;
  }
  return samples;
}

function secondsToIndex(seconds: number): number {
  return Math.max(0, Math.round(seconds * SAMPLE_RATE));
}

/** Words one after another with a reader's short pause between them. */
function joinWords(parts: Float32Array[]): Float32Array {
  const gap = new Float32Array(Math.round(WORD_GAP_SECONDS * SAMPLE_RATE));
  return joined(parts.flatMap((part) => [part, gap]));
}
