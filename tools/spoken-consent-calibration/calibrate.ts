/**
 * Calibrates the spoken-consent words check on read speech with known text (speechocean762 in
 * ../shared/speech/dev) and measures it on the synthetic voices committed under
 * fixtures/spoken-consent/synthetic/; writes origin/src/spoken-consent/calibration.json:
 *
 *   npx tsx tools/spoken-consent-calibration/calibrate.ts [--sets dev,synthetic] [--dir ../shared/speech/dev] [--limit 300] [--takes 8]
 *
 * `--limit` bounds the sentence recordings and the digit-string recordings each (every decode costs
 * about half a second of CPU). `--sets synthetic` measures the synthetic voices alone and keeps the
 * dev calibration (the service's threshold) as the file holds it.
 *
 * Statement: each recording decoded against a grammar of its own transcript (a genuine reading), of
 * another speaker's transcript (a wrong recording for that text) and of its own transcript with one
 * word swapped for the longest word of the other transcript it lacks (a word the speaker did not say);
 * the threshold is the lowest phone-loop score at which at most 1% of the wrong recordings pass. Each
 * word's bounds (its evidence against the phone loop on its frames, `wordEvidence`; its frames per phone) leave out
 * WORD_MISS_TARGET of the words of the genuine readings that pass on their score; the pass rates are
 * given with and without them (`before_word_checks`). Phrase: each digit-string
 * recording read back free against its own digits and another speaker's digits.
 *
 * Synthetic voices (set `synthetic`, one figure per voice): `--takes` first takes of a consent
 * recording, each the current statement and a phrase drawn as the origin draws one (from a fixed
 * seed, so every run draws the same), checked as an enrollment checks it; the same takes with the
 * statement's negation, with another text in its place and with one word swapped for a word the
 * statement lacks ("clone" for "protect") (wrong text accepted); the words check's
 * CPU time against the recording's length (real-time factor).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { limits, SPOKEN_CONSENT_STATEMENT } from '@vip/shared-schema';
import {
  checkConsentWords,
  PHRASE_WORDS,
  phraseErrors,
  type WordCalibration,
  type WordThresholds,
  wordEvidence,
  wordsNotSaid,
  wordThresholdsOf,
} from '../../origin/src/spoken-consent/consent-words.js';
import { type DecodedWords, WordsChecker } from '../../origin/src/spoken-consent/words.js';
import {
  SYNTHETIC_VOICES,
  type SyntheticReading,
  type SyntheticVoice,
  syntheticConsentSamples,
} from '../../origin/src/testing/synthetic-consent.js';
import { decodeAudio, readSpeechManifest } from '../../origin/src/voiceprint/index.js';

const IMPOSTOR_PASS_TARGET = 0.01;
/**
 * The share of genuine words (each word of the genuine dev readings that pass on their score) each
 * word bound may refuse: its own score's lower bound, and its length per phone's lower and upper bound.
 */
const WORD_MISS_TARGET = 0.001;
const { values } = parseArgs({
  options: {
    sets: { type: 'string', default: 'dev,synthetic' },
    dir: { type: 'string', default: '../shared/speech/dev' },
    limit: { type: 'string', default: '300' },
    takes: { type: 'string', default: '8' },
  },
});
const sets = new Set(values.sets.split(','));
const calibrationFile = new URL('../../origin/src/spoken-consent/calibration.json', import.meta.url);
const written = JSON.parse(readFileSync(calibrationFile, 'utf8')) as Record<string, unknown>;
const checker = await WordsChecker.create();
const share = (list: number[], pass: (value: number) => boolean) =>
  Math.round((list.filter(pass).length / Math.max(1, list.length)) * 1000) / 1000;
const quantile = (list: number[], q: number, scale = 100) => {
  const sorted = list.filter(Number.isFinite).sort((a, b) => a - b);
  return Math.round((sorted[Math.floor(q * (sorted.length - 1))] ?? 0) * scale) / scale;
};

interface Reading {
  text: string;
  decoded: DecodedWords | null;
}

/** A reading decoded against its own text with one word swapped for a word the speaker did not say, at `position`. */
interface SwappedReading extends Reading {
  position: number;
}

/**
 * `text` with the word at swapPosition replaced by the longest word of `other` that `text` lacks: a
 * content word, as a forger who wants the recording to agree to something else would swap one.
 */
function withOneWordSwapped(text: string, other: string, index: number): { text: string; position: number } | null {
  const words = text.split(' ');
  const position = index % words.length;
  const stranger = other
    .split(' ')
    .filter((word) => !words.includes(word))
    .sort((a, b) => b.length - a.length || a.localeCompare(b))[0];
  // A text whose every word this one has (a shorter sentence of the same words) has nothing to swap in.
  if (stranger === undefined) return null;
  words[position] = stranger;
  return { text: words.join(' '), position };
}

/** The evidence of each swapped-in word, where the decoder put it. */
function swappedWordEvidence(swapped: SwappedReading[]) {
  const evidence = swapped.flatMap((reading) => {
    const word = reading.decoded?.words[reading.position];
    return word ? [wordEvidence(word)] : [];
  });
  return { p50: quantile(evidence, 0.5), p95: quantile(evidence, 0.95), p99: quantile(evidence, 0.99) };
}
const calibration: Record<string, unknown> = { ...written, ...(sets.has('dev') ? await calibrateOnDev() : {}) };
// The synthetic voices are measured at the threshold the service uses: the one just calibrated, or the file's.
if (sets.has('synthetic')) {
  calibration.synthetic = await measureSyntheticVoices(
    calibration.statement as { min_score: number },
    wordThresholdsOf(calibration.word as WordCalibration),
  );
}
checker.close();
writeFileSync(calibrationFile, `${JSON.stringify(calibration, null, 2)}\n`);
console.log(JSON.stringify(calibration, null, 2));

async function calibrateOnDev() {
  const dir = path.resolve(values.dir);
  const speakerOf = new Map(readSpeechManifest(dir).map((recording) => [recording.path, recording.speaker]));
  const rows = readFileSync(path.join(dir, 'transcripts.tsv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [file, text] = line.split('\t') as [string, string];
      return { file, text: text.trim().toLowerCase(), speaker: speakerOf.get(file) ?? file };
    });

  const spellable = rows.filter((row) => row.text.split(' ').every((word) => checker.knows(word)));
  const digitPattern = new RegExp(`^(${PHRASE_WORDS.join('|')})( (${PHRASE_WORDS.join('|')}))*$`);
  const digits = spellable.filter((row) => digitPattern.test(row.text));
  const sentences = spellable.filter((row) => !digitPattern.test(row.text));
  const limit = Number(values.limit);
  const step = Math.max(1, Math.floor(sentences.length / limit));
  const sample = sentences.filter((_, index) => index % step === 0).slice(0, limit);

  /** Another speaker's row, a fixed distance on, so every run pairs the same recordings. */
  const otherSpeakers = <T extends { speaker: string; text: string }>(list: T[], index: number): T => {
    for (let offset = Math.floor(list.length / 2); ; offset++) {
      const other = list[(index + offset) % list.length]!;
      if (other.speaker !== list[index]!.speaker && other.text !== list[index]!.text) return other;
    }
  };

  const audioOf = async (file: string) =>
    (await decodeAudio(readFileSync(path.join(dir, file)), { maxBytes: limits.audioMaxBytes, maxSeconds: 60, minSeconds: 0 })).samples;

  /** A reading decoded against `text`: its score, null when the decoder found no path through the text. */
  const readAs = (audio: Float32Array, text: string) => {
    const decoded = checker.decode(audio, `(${text})`);
    return { text, decoded: decoded.text === text ? decoded : null };
  };
  const genuine: Reading[] = [];
  const impostor: Reading[] = [];
  const swapped: SwappedReading[] = [];
  for (const [index, row] of sample.entries()) {
    const audio = await audioOf(row.file);
    const other = otherSpeakers(sample, index);
    genuine.push(readAs(audio, row.text));
    impostor.push(readAs(audio, other.text));
    const swap = withOneWordSwapped(row.text, other.text, index);
    if (swap) swapped.push({ ...readAs(audio, swap.text), position: swap.position });
    if (index % 25 === 0) process.stderr.write(`statement ${index}/${sample.length}\n`);
  }

  const phraseGenuine: number[] = [];
  const phraseImpostor: number[] = [];
  const digitSample = digits.slice(0, limit);
  for (const [index, row] of digitSample.entries()) {
    const audio = await audioOf(row.file);
    phraseGenuine.push(phraseErrors(checker, audio, row.text).wrongWords);
    phraseImpostor.push(phraseErrors(checker, audio, otherSpeakers(digitSample, index).text).wrongWords);
  }

  const scoreOf = (reading: Reading) => reading.decoded?.score ?? Number.NEGATIVE_INFINITY;
  const sortedImpostor = impostor
    .map(scoreOf)
    .filter(Number.isFinite)
    .sort((a, b) => b - a);
  // The lowest threshold at which no more than the target share of wrong recordings passes.
  const allowed = Math.floor(IMPOSTOR_PASS_TARGET * impostor.length);
  const minStatementScore = Math.round(((sortedImpostor[allowed] ?? 0) + 0.005) * 100) / 100;

  // Each word's bounds, from the words of the genuine readings that pass on their score: a bound that
  // refused a word only of readings refused already would cost nothing, and those readings' words
  // (the least fluent) would loosen it.
  const genuineWords = genuine.filter((reading) => scoreOf(reading) >= minStatementScore).flatMap((reading) => reading.decoded!.words);
  const evidence = genuineWords.map(wordEvidence);
  const framesPerPhone = genuineWords.map((word) => word.frames / word.phones);
  const wordBounds: WordCalibration = {
    min_evidence: Math.floor(quantile(evidence, WORD_MISS_TARGET, 1000) * 100) / 100,
    min_frames_per_phone: quantile(framesPerPhone, WORD_MISS_TARGET, 1000),
    max_frames_per_phone: quantile(framesPerPhone, 1 - WORD_MISS_TARGET, 1000),
  };
  const word = wordThresholdsOf(wordBounds);
  /** Passes the recording's score alone (before the word checks), and the score and every word's check. */
  const passes = (reading: Reading, withWords: boolean) =>
    scoreOf(reading) >= minStatementScore && (!withWords || wordsNotSaid(reading.decoded!.words, reading.text, word).length === 0);
  const passShare = (list: Reading[], withWords: boolean) =>
    share(
      list.map((reading) => (passes(reading, withWords) ? 1 : 0)),
      (n) => n === 1,
    );

  return {
    data: path.relative(process.cwd(), dir),
    command: `npx tsx tools/spoken-consent-calibration/calibrate.ts --sets dev --dir ${values.dir} --limit ${values.limit}`,
    statement: {
      min_score: minStatementScore,
      recordings: sample.length,
      genuine_pass: passShare(genuine, true),
      wrong_recording_pass: passShare(impostor, true),
      one_word_swapped_pass: passShare(swapped, true),
      before_word_checks: {
        genuine_pass: passShare(genuine, false),
        wrong_recording_pass: passShare(impostor, false),
        one_word_swapped_pass: passShare(swapped, false),
      },
      genuine_score_quantiles: { p05: quantile(genuine.map(scoreOf), 0.05), p50: quantile(genuine.map(scoreOf), 0.5) },
      wrong_score_quantiles: {
        p50: quantile(impostor.map(scoreOf), 0.5),
        p95: quantile(impostor.map(scoreOf), 0.95),
        p99: quantile(impostor.map(scoreOf), 0.99),
      },
    },
    word: {
      ...wordBounds,
      miss_target: WORD_MISS_TARGET,
      genuine_words: genuineWords.length,
      genuine_evidence_quantiles: { p001: quantile(evidence, 0.001), p01: quantile(evidence, 0.01), p50: quantile(evidence, 0.5) },
      swapped_readings: swapped.length,
      swapped_word_evidence_quantiles: swappedWordEvidence(swapped),
    },
    phrase: {
      recordings: digitSample.length,
      exact: { genuine_pass: share(phraseGenuine, (n) => n === 0), other_phrase_pass: share(phraseImpostor, (n) => n === 0) },
      one_word_wrong: { genuine_pass: share(phraseGenuine, (n) => n <= 1), other_phrase_pass: share(phraseImpostor, (n) => n <= 1) },
    },
  };
}

/** A phrase as the origin draws one (service.ts: each word from 32 random bits), from a fixed-seed generator. */
function drawPhrases(count: number): string[] {
  let state = 0x2545f491;
  const next = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state;
  };
  return Array.from({ length: count }, () =>
    Array.from({ length: limits.consentPhraseWords }, () => PHRASE_WORDS[next() % PHRASE_WORDS.length]).join(' '),
  );
}

async function measureSyntheticVoices(statementCalibration: { min_score: number }, word: WordThresholds) {
  const takes = Number(values.takes);
  const phrases = drawPhrases(takes);
  const thresholds = { minStatementScore: statementCalibration.min_score, word, phraseMaxWrongWords: 1 };
  const perVoice: Record<string, unknown> = {};
  for (const voice of Object.keys(SYNTHETIC_VOICES) as SyntheticVoice[]) {
    const verdicts = async (reading: SyntheticReading) => {
      const results = [];
      for (const phrase of phrases) {
        const samples = await syntheticConsentSamples(voice, phrase, reading);
        // CPU time, not wall time: the decoder runs on this one thread, and a shared machine's wall clock counts the others' work too.
        const started = process.cpuUsage();
        const verdict = checkConsentWords(
          checker,
          samples,
          { statement: SPOKEN_CONSENT_STATEMENT.text, negations: SPOKEN_CONSENT_STATEMENT.negations, phrase },
          thresholds,
        );
        const used = process.cpuUsage(started);
        results.push({ verdict, rtf: (used.user + used.system) / 1e6 / (samples.length / 16000) });
      }
      return results;
    };
    const genuine = await verdicts('statement');
    const negated = await verdicts('negated');
    const other = await verdicts('other');
    const swapped = await verdicts('swapped');
    const passed = (list: typeof genuine) => list.map(({ verdict }) => (verdict.statement.passed && verdict.phrase.passed ? 1 : 0));
    perVoice[voice] = {
      takes,
      statement_first_take_pass: share(
        genuine.map(({ verdict }) => (verdict.statement.passed ? 1 : 0)),
        (n) => n === 1,
      ),
      phrase_first_take_pass: {
        exact: share(
          genuine.map(({ verdict }) => verdict.phrase.wrong_words),
          (n) => n === 0,
        ),
        one_word_wrong: share(
          genuine.map(({ verdict }) => verdict.phrase.wrong_words),
          (n) => n <= 1,
        ),
      },
      consent_first_take_pass: share(passed(genuine), (n) => n === 1),
      negated_statement_accepted: share(passed(negated), (n) => n === 1),
      other_text_accepted: share(passed(other), (n) => n === 1),
      swapped_word_accepted: share(passed(swapped), (n) => n === 1),
      statement_score_p50: quantile(
        genuine.map(({ verdict }) => verdict.statement.score),
        0.5,
      ),
      words_check_cpu_rtf_p50: quantile(
        genuine.map(({ rtf }) => rtf),
        0.5,
      ),
    };
    process.stderr.write(`${voice}: ${JSON.stringify(perVoice[voice])}\n`);
  }
  return {
    command: `npx tsx tools/spoken-consent-calibration/calibrate.ts --sets synthetic --takes ${takes}`,
    data: 'fixtures/spoken-consent/synthetic',
    statement_version: SPOKEN_CONSENT_STATEMENT.version,
    voices: perVoice,
  };
}
