import type { WordScore, WordsChecker } from './words.js';

/** The words a challenge phrase is made of, each checked against the decoder's dictionary at start-up. */
export const PHRASE_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'] as const;

export const PHRASE_RULES = { phrase_word: PHRASE_WORDS.join(' | ') };

/**
 * Any phrase words, as many as the challenge has: the phrase is read back free, so a wrong word shows
 * as itself. A free-length loop inserts words into non-native read digits (on dev, 1 in 8 strings came
 * back exact against 5 in 8 with the length fixed).
 */
const phraseRule = (wordCount: number) => Array.from({ length: wordCount }, () => '<phrase_word>').join(' ');

export interface ConsentText {
  statement: string;
  /** The statement's negated forms ("I do not agree ..."): listed in the grammar so that reading one is heard as it. */
  negations: readonly string[];
  phrase: string;
}

export interface WordsThresholds {
  /** The lowest phone-loop score (nats per frame) of a reading of the statement (calibration.json). */
  minStatementScore: number;
  /** What each word of the statement must show on its own frames (calibration.json `word`). */
  word: WordThresholds;
  /** 0: the phrase must be heard exactly; 1: one word may be wrong, missing or extra. */
  phraseMaxWrongWords: number;
}

/** Bounds a word that was said keeps (calibrate.ts: all but a small share of genuine words on dev/). */
export interface WordThresholds {
  /** The lowest evidence of a word against the phone loop on its own frames (`wordEvidence`). */
  minEvidence: number;
  /** Frames per phone of the word: fewer is a word squeezed onto too little sound, more one stretched over other sounds. */
  minFramesPerPhone: number;
  maxFramesPerPhone: number;
}

/** The word bounds as calibration.json holds them (written by calibrate.ts). */
export interface WordCalibration {
  min_evidence: number;
  min_frames_per_phone: number;
  max_frames_per_phone: number;
}

export const wordThresholdsOf = (calibration: WordCalibration): WordThresholds => ({
  minEvidence: calibration.min_evidence,
  minFramesPerPhone: calibration.min_frames_per_phone,
  maxFramesPerPhone: calibration.max_frames_per_phone,
});

/** Why a word of the statement was not taken as said. */
export type WordFault = 'score' | 'too_short' | 'too_long';

export interface WordNotSaid {
  word: string;
  /** Its place in the statement, from 1. */
  position: number;
  fault: WordFault;
}

export interface WordsVerdict {
  /** Everything the decoder heard, statement (or its negation) and phrase. */
  heard: string;
  /** `words_not_said`: the statement's words the decoder had to force onto the audio (empty when it heard a negation or nothing). */
  statement: { passed: boolean; score: number; words_not_said: WordNotSaid[] };
  phrase: { passed: boolean; heard: string; wrong_words: number };
}

/** Words as the decoder spells them: lower case, without punctuation. */
export const spokenWords = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z' ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

const normalize = (text: string) => spokenWords(text).join(' ');

/**
 * How surely a word's frames are the word rather than other sounds: its score against the phone loop
 * summed over its frames, divided by the square root of their number. Frame scores scatter, so a sum
 * over n frames grows n times while its scatter grows only √n times: a short word's few low frames are
 * weaker evidence than a long word's many (docs/DECISIONS.md#the-words-check-reads-its-own-path-each-word-weighed-by-its-length:
 * on dev/ it lets fewer swapped words through than the score per frame does, at the same share of
 * genuine words refused).
 */
export const wordEvidence = (word: Pick<WordScore, 'score' | 'frames'>) => word.score * Math.sqrt(word.frames);

/** The fault of one word, or null when it looks said: its evidence first, then its length for its phones. */
export function wordFault(word: WordScore, thresholds: WordThresholds): WordFault | null {
  if (wordEvidence(word) < thresholds.minEvidence) return 'score';
  const framesPerPhone = word.frames / word.phones;
  if (framesPerPhone < thresholds.minFramesPerPhone) return 'too_short';
  if (framesPerPhone > thresholds.maxFramesPerPhone) return 'too_long';
  return null;
}

/** The words of `sentence` (the first words on the decoder's path) that `wordFault` finds fault with. */
export function wordsNotSaid(words: readonly WordScore[], sentence: string, thresholds: WordThresholds): WordNotSaid[] {
  return sentence.split(' ').flatMap((expected, index) => {
    const word = words[index];
    // A word the path lost has no frames of its own: nothing in the audio was it.
    const fault = word ? wordFault(word, thresholds) : 'score';
    return fault ? [{ word: expected, position: index + 1, fault }] : [];
  });
}

/**
 * The consent recording, the statement followed by the phrase, decoded once against a grammar of the
 * statement, its negations and any phrase: the statement passes when the statement itself (not a
 * negation) was heard, the recording scores at least `minStatementScore` against the phone loop and
 * no word of the statement was forced in (each word's evidence against the phone loop, and its
 * length for its phones, within `word`); the phrase passes when at most `phraseMaxWrongWords` of its
 * words differ.
 */
export function checkConsentWords(
  checker: WordsChecker,
  samples: Float32Array,
  text: ConsentText,
  thresholds: WordsThresholds,
): WordsVerdict {
  const statement = normalize(text.statement);
  const alternatives = [statement, ...text.negations.map(normalize)];
  const phrase = normalize(text.phrase);
  const grammar = `(${alternatives.map((sentence) => `(${sentence})`).join(' | ')}) ${phraseRule(phrase.split(' ').length)}`;
  const decoded = checker.decode(samples, grammar, PHRASE_RULES);
  // The longest alternative the decoded text starts with is what was read; the rest is the phrase.
  const read = alternatives
    .filter((sentence) => decoded.text === sentence || decoded.text.startsWith(`${sentence} `))
    .sort((a, b) => b.length - a.length)[0];
  const phraseHeard = read === undefined ? '' : decoded.text.slice(read.length).trim();
  const wrongWords = wordErrors(phraseHeard, phrase);
  const notSaid = read === statement ? wordsNotSaid(decoded.words, statement, thresholds.word) : [];
  return {
    heard: decoded.text,
    statement: {
      passed: read === statement && decoded.score >= thresholds.minStatementScore && notSaid.length === 0,
      score: roundScore(decoded.score),
      words_not_said: notSaid,
    },
    phrase: { passed: read !== undefined && wrongWords <= thresholds.phraseMaxWrongWords, heard: phraseHeard, wrong_words: wrongWords },
  };
}

/** The phrase alone (calibration on recorded digit strings): read back, and how many words differ from `expected`. */
export function phraseErrors(checker: WordsChecker, samples: Float32Array, expected: string): { heard: string; wrongWords: number } {
  const phrase = normalize(expected);
  const heard = checker.decodeText(samples, phraseRule(phrase.split(' ').length), PHRASE_RULES);
  return { heard, wrongWords: wordErrors(heard, phrase) };
}

/** Word-level edit distance: substitutions, insertions and deletions. */
export function wordErrors(heard: string, expected: string): number {
  const a = heard === '' ? [] : heard.split(' ');
  const b = expected === '' ? [] : expected.split(' ');
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/** Scores go into the consent record and problem details: two decimals say all they mean. */
const roundScore = (score: number) => (Number.isFinite(score) ? Math.round(score * 100) / 100 : -99);
