import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { speechDir } from '../testing/fixtures.js';
import { decodeAudio } from '../voiceprint/decode.js';
import { phraseErrors, wordErrors } from './consent-words.js';
import { WordsChecker } from './words.js';

/** The threshold the service uses (calibrate.ts on dev/; the fixtures are dev/ recordings, so this is a check of the wiring, not a measurement). */
const calibration = JSON.parse(readFileSync(new URL('./calibration.json', import.meta.url), 'utf8')) as {
  statement: { min_score: number };
};

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

  it('hears a real reading of its known text, above the calibrated score; against another sentence it scores below', async () => {
    for (const [index, file] of READINGS.entries()) {
      const own = transcripts.get(file)!;
      const other = transcripts.get(READINGS[(index + 1) % READINGS.length]!)!;
      const audio = await samplesOf(file);
      const genuine = checker.decode(audio, `(${own})`);
      expect(genuine.text, file).toBe(own);
      expect(genuine.score, file).toBeGreaterThanOrEqual(calibration.statement.min_score);
      expect(checker.decode(audio, `(${other})`).score, `${file} read as "${other}"`).toBeLessThan(calibration.statement.min_score);
    }
  });

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

describe('wordErrors', () => {
  it('counts substituted, missing and extra words', () => {
    expect(wordErrors('one two three', 'one two three')).toBe(0);
    expect(wordErrors('one five three', 'one two three')).toBe(1);
    expect(wordErrors('one three', 'one two three')).toBe(1);
    expect(wordErrors('one two two three', 'one two three')).toBe(1);
    expect(wordErrors('', 'one two')).toBe(2);
  });
});
