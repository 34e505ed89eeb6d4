import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { speechDir } from '../testing/fixtures.js';
import {
  SYNTHETIC_CONSENT_TEXTS,
  SYNTHETIC_STATEMENT,
  SYNTHETIC_VOICES,
  type SyntheticVoice,
  syntheticConsentSamples,
} from '../testing/synthetic-consent.js';
import { decodeAudio } from '../voiceprint/decode.js';
import {
  checkConsentWords,
  phraseErrors,
  spokenWords,
  type WordCalibration,
  wordErrors,
  wordEvidence,
  wordFault,
  wordThresholdsOf,
} from './consent-words.js';
import { WordsChecker } from './words.js';

/** The threshold the service uses (calibrate.ts on dev/; the fixtures are dev/ recordings, so this is a check of the wiring, not a measurement). */
const calibration = JSON.parse(readFileSync(new URL('./calibration.json', import.meta.url), 'utf8')) as {
  statement: { min_score: number };
  word: WordCalibration;
};
const WORD = wordThresholdsOf(calibration.word);
/** Each decode is a second or two of CPU (two searches); on a loaded shared machine several times that. */
const DECODES_TIMEOUT_MS = 180_000;

/** The committed speech fixtures' transcripts (fixtures/speech/transcripts.tsv, from speechocean762). */
const transcripts = new Map(
  readFileSync(path.join(speechDir, 'transcripts.tsv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split('\t') as [string, string]),
);

const samplesOf = async (file: string) =>
  (await decodeAudio(readFileSync(path.join(speechDir, file)), { maxBytes: 1 << 24, maxSeconds: 60, minSeconds: 0 })).samples;

let checker: WordsChecker;
beforeAll(async () => {
  checker = await WordsChecker.create();
});
afterAll(() => checker?.close());

describe('WordsChecker', () => {
  /**
   * Readings that pass: many genuine non-native readings score below the threshold (one in the
   * fixtures, "he closed his eyes as he walked", scores about 0), which the figures in
   * docs/DECISIONS.md#spoken-consent count.
   */
  const READINGS = [
    'so762/SPEAKER0024/000240152.opus',
    'so762/SPEAKER0024/000240010.opus',
    'so762/SPEAKER0024/000240071.opus',
    'so762/SPEAKER0003/000030012.opus',
  ];

  it(
    'hears a real reading of its known text, above the calibrated score; against another sentence it scores below',
    async () => {
      for (const [index, file] of READINGS.entries()) {
        const own = transcripts.get(file)!;
        const other = transcripts.get(READINGS[(index + 1) % READINGS.length]!)!;
        const audio = await samplesOf(file);
        const genuine = checker.decode(audio, `(${own})`);
        expect(genuine.text, file).toBe(own);
        expect(genuine.score, file).toBeGreaterThanOrEqual(calibration.statement.min_score);
        expect(checker.decode(audio, `(${other})`).score, `${file} read as "${other}"`).toBeLessThan(calibration.statement.min_score);
      }
    },
    DECODES_TIMEOUT_MS,
  );

  it(
    'scores each word of a real reading on its own frames: every word of the genuine readings within the calibrated bounds',
    async () => {
      for (const file of READINGS) {
        const decoded = checker.decode(await samplesOf(file), `(${transcripts.get(file)!})`);
        expect(decoded.words.map((word) => word.word).join(' '), file).toBe(transcripts.get(file));
        for (const word of decoded.words) expect(wordFault(word, WORD), `${file}: ${JSON.stringify(word)}`).toBeNull();
      }
    },
    DECODES_TIMEOUT_MS,
  );

  it('reads back a digit string, and another digit string is several words off', async () => {
    const file = 'so762/SPEAKER0003/000030049.opus';
    const audio = await samplesOf(file);
    expect(phraseErrors(checker, audio, transcripts.get(file)!).wrongWords).toBeLessThanOrEqual(1);
    expect(phraseErrors(checker, audio, 'six three five seven').wrongWords).toBeGreaterThan(1);
  });

  it('hears nothing in silence (dithered, so the decoder does not fail on it)', async () => {
    const decoded = checker.decode(new Float32Array(16000 * 2), '(i agree)');
    expect(decoded.score === Number.NEGATIVE_INFINITY || decoded.score < calibration.statement.min_score).toBe(true);
  });
});

describe('wordFault', () => {
  const bounds = { minEvidence: -20, minFramesPerPhone: 3.5, maxFramesPerPhone: 30 };
  it('finds fault with a word of too little evidence, then with one too short or too long for its phones', () => {
    expect(wordFault({ word: 'print', frames: 25, phones: 5, score: -1 }, bounds)).toBeNull();
    expect(wordFault({ word: 'print', frames: 25, phones: 5, score: -4.01 }, bounds)).toBe('score');
    expect(wordFault({ word: 'print', frames: 15, phones: 5, score: 2 }, bounds)).toBe('too_short');
    expect(wordFault({ word: 'print', frames: 151, phones: 5, score: 2 }, bounds)).toBe('too_long');
    // The bounds themselves are inside.
    expect(wordFault({ word: 'print', frames: 25, phones: 5, score: -4 }, bounds)).toBeNull();
  });

  it('weighs a score by the square root of the frames it holds over: the same score per frame is stronger evidence over a longer word', () => {
    expect(wordEvidence({ score: -2, frames: 16 })).toBe(-8);
    expect(wordEvidence({ score: -2, frames: 64 })).toBe(-16);
    expect(wordFault({ word: 'it', frames: 16, phones: 2, score: -4.5 }, bounds)).toBeNull();
    expect(wordFault({ word: 'synthesizing', frames: 64, phones: 12, score: -2.6 }, bounds)).toBe('score');
  });
});

describe('wordErrors', () => {
  it('counts substituted, missing and extra words', () => {
    expect(wordErrors('one two three', 'one two three')).toBe(0);
    expect(wordErrors('one five three', 'one two three')).toBe(1);
    expect(wordErrors('one three', 'one two three')).toBe(1);
    expect(wordErrors('one two two three', 'one two three')).toBe(1);
    expect(wordErrors('', 'one two')).toBe(2);
  });
});

describe('checkConsentWords on voices no corpus speaker has (fixtures/spoken-consent/synthetic/)', () => {
  const thresholds = { minStatementScore: calibration.statement.min_score, word: WORD, phraseMaxWrongWords: 1 };
  const text = (phrase: string) => ({ statement: SYNTHETIC_STATEMENT.text, negations: SYNTHETIC_STATEMENT.negations, phrase });
  /** Any phrase: each digit is its own recording (the passing path, with phrases the origin drew, is in spoken-consent.test.ts). */
  const PHRASE = 'seven three zero one four eight';

  it.each(Object.keys(SYNTHETIC_VOICES) as SyntheticVoice[])(
    'refuses %s reading the negated statement (heard as what it is) and reading another text',
    async (voice) => {
      const negated = checkConsentWords(checker, await syntheticConsentSamples(voice, PHRASE, 'negated'), text(PHRASE), thresholds);
      expect(negated.statement.passed).toBe(false);
      expect(negated.heard).toBe(`${spokenWords(SYNTHETIC_CONSENT_TEXTS.negated).join(' ')} ${PHRASE}`);
      const other = checkConsentWords(checker, await syntheticConsentSamples(voice, PHRASE, 'other'), text(PHRASE), thresholds);
      expect(other.statement.passed).toBe(false);
    },
    DECODES_TIMEOUT_MS,
  );

  it(
    'refuses flite-kal16 reading "clone" where the statement says "protect", naming the word the decoder forced in; its own reading of the statement has no word out of bounds',
    async () => {
      const swapped = checkConsentWords(checker, await syntheticConsentSamples('flite-kal16', PHRASE, 'swapped'), text(PHRASE), thresholds);
      expect(swapped.statement.passed).toBe(false);
      expect(swapped.statement.words_not_said).toEqual([{ word: 'protect', position: 17, fault: 'score' }]);
      // The overall score alone would have let it through: the word check is what refuses it.
      expect(swapped.statement.score).toBeGreaterThanOrEqual(calibration.statement.min_score);
      expect(swapped.heard.startsWith(spokenWords(SYNTHETIC_STATEMENT.text).join(' '))).toBe(true);
      const genuine = checkConsentWords(checker, await syntheticConsentSamples('flite-kal16', PHRASE), text(PHRASE), thresholds);
      expect(genuine.statement).toMatchObject({ passed: true, words_not_said: [] });
    },
    DECODES_TIMEOUT_MS,
  );
});
