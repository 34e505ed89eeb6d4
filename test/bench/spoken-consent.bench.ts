import { readFileSync } from 'node:fs';
import { SPOKEN_CONSENT_STATEMENT } from '@vip/shared-schema';
import { checkConsentWords } from '../../origin/src/spoken-consent/consent-words.js';
import { WordsChecker } from '../../origin/src/spoken-consent/words.js';
import { recordedConsent, recordedConsentEnrollment } from '../../origin/src/testing/recorded-consent.js';
import { startTestEngine } from '../../origin/src/testing/voiceprint.js';
import { decodeAudio } from '../../origin/src/voiceprint/decode.js';
import type { Bench, Figure } from './bench.js';
import { median, percentile, round } from './support/stats.js';

/** A phrase of the digits the recorded speaker said (fixtures/spoken-consent/). */
const PHRASE = 'six eight zero two nine five';

/** What calibrate.ts measured on dev/ (origin/src/spoken-consent/calibration.json). */
interface WordsCalibration {
  command: string;
  statement: { min_score: number; recordings: number; genuine_pass: number; wrong_recording_pass: number };
  phrase: {
    recordings: number;
    exact: { genuine_pass: number; other_phrase_pass: number };
    one_word_wrong: { genuine_pass: number; other_phrase_pass: number };
  };
}

/** The sample-vs-enrolled condition of a model's calibration (evaluate.ts on dev/), at the point the speaker check uses. */
interface SpeakerCondition {
  genuine: number;
  impostor: number;
  at_verify: { threshold: number; far_pct: number; frr_pct: number };
  per_set: Record<string, { genuine: number; impostor: number; at_verify: { far_pct: number; frr_pct: number } }>;
}

const readJson = <T>(url: URL): T => JSON.parse(readFileSync(url, 'utf8')) as T;
const percent = (share: number) => `${round(share * 100, 1)} %`;

const bench: Bench = {
  title: 'Spoken consent: the words and voice checks on one consent recording (origin, one thread)',
  method: [
    'The committed spoken consent of so762:SPEAKER2007 (fixtures/spoken-consent/: the statement, then six digits) is checked as an',
    'enrollment checks it: the words by PocketSphinx (`checkConsentWords`: one decode against the grammar of the statement, its',
    'negations and the phrase, one against the free phone loop) and the voice by the speaker model (the recording embedded and',
    "compared with the speaker's enrollment at the model's sample-vs-enrolled point). Each is timed on its own, one call at a time,",
    'after one warm-up call; the decoder load is timed once. How often the checks pass genuine and wrong readings is measured on',
    'dev/ by calibrate.ts and evaluate.ts, not here: the notes give those figures and their commands, read from the files they wrote.',
  ].join(' '),
  async run({ quick }) {
    const runs = quick ? 2 : 8;
    const recording = recordedConsent(PHRASE);
    const { samples, durationSeconds } = await decodeAudio(recording, { maxBytes: 2 ** 24, maxSeconds: 60, minSeconds: 0 });
    const text = { statement: SPOKEN_CONSENT_STATEMENT.text, negations: SPOKEN_CONSENT_STATEMENT.negations, phrase: PHRASE };
    const calibration = readJson<WordsCalibration>(new URL('../../origin/src/spoken-consent/calibration.json', import.meta.url));
    const thresholds = { minStatementScore: calibration.statement.min_score, phraseMaxWrongWords: 1 };

    const loadStarted = performance.now();
    const checker = await WordsChecker.create();
    const loadMs = performance.now() - loadStarted;
    const engine = await startTestEngine({ threads: 1 });
    try {
      const enrollment = await engine.embedMany(recordedConsentEnrollment());
      const wordsMs: number[] = [];
      const voiceMs: number[] = [];
      for (let run = -1; run < runs; run++) {
        let started = performance.now();
        const verdict = checkConsentWords(checker, samples, text, thresholds);
        const words = performance.now() - started;
        if (!verdict.statement.passed || !verdict.phrase.passed)
          throw new Error(`the recorded consent was refused: heard "${verdict.heard}"`);
        started = performance.now();
        const similarity = engine.cosine(await engine.embedFile(recording), enrollment);
        const voice = performance.now() - started;
        if (similarity < engine.points(enrollment.model).sample_vs_enrolled.verify)
          throw new Error(`the recorded consent's voice scored ${similarity}`);
        if (run >= 0) {
          wordsMs.push(words);
          voiceMs.push(voice);
        }
      }
      const speaker = readJson<{ conditions: { sample_vs_enrolled: SpeakerCondition } }>(
        new URL(`../../origin/src/voiceprint/models/${engine.model.name}.calibration.json`, import.meta.url),
      ).conditions.sample_vs_enrolled;
      const perSet = Object.entries(speaker.per_set)
        .map(([set, figures]) => `${set} ${round(figures.at_verify.far_pct, 2)} % of ${figures.impostor}`)
        .join(', ');
      const figures: Figure[] = [
        {
          key: 'spoken_consent.decoder_load_ms',
          label: 'decoder load (US English model, dictionary check)',
          value: round(loadMs, 0),
          unit: 'ms',
        },
        {
          key: 'spoken_consent.words.p50_ms',
          label: `words check of a ${round(durationSeconds, 1)} s consent: p50`,
          value: round(median(wordsMs), 1),
          unit: 'ms',
        },
        {
          key: 'spoken_consent.words.p99_ms',
          label: `words check of a ${round(durationSeconds, 1)} s consent: p99`,
          value: round(percentile(wordsMs, 0.99), 1),
          unit: 'ms',
        },
        {
          key: 'spoken_consent.words.rtf',
          label: 'words check: real-time factor',
          value: round(median(wordsMs) / 1000 / durationSeconds, 3),
          unit: 'ratio',
        },
        {
          key: 'spoken_consent.voice.p50_ms',
          label: 'voice check (embedding the consent recording): p50',
          value: round(median(voiceMs), 1),
          unit: 'ms',
        },
      ];
      return {
        figures,
        notes: [
          `Words, on dev/ (\`${calibration.command}\`, calibration.json): the statement passes ${percent(calibration.statement.genuine_pass)} of ${calibration.statement.recordings} genuine readings (a recording against its own transcript) and ${percent(calibration.statement.wrong_recording_pass)} of wrong ones (another speaker's recording against that text), at min_score ${calibration.statement.min_score} nats/frame.`,
          `Phrase, on dev/'s ${calibration.phrase.recordings} recorded digit strings: read back exactly ${percent(calibration.phrase.exact.genuine_pass)}, with at most one word wrong (the default) ${percent(calibration.phrase.one_word_wrong.genuine_pass)}; another speaker's digit string passes ${percent(calibration.phrase.one_word_wrong.other_phrase_pass)}.`,
          `Voice, on dev/ (\`npx tsx origin/src/voiceprint/training/evaluate.ts --model ${engine.model.name} --write\`, sample-vs-enrolled): at the point ${speaker.at_verify.threshold}, another speaker's recording is accepted ${round(speaker.at_verify.far_pct, 2)} % of ${speaker.impostor} trials and the speaker's own refused ${round(speaker.at_verify.frr_pct, 2)} % of ${speaker.genuine}; accepted by set: ${perSet}.`,
        ],
      };
    } finally {
      checker.close();
      await engine.close();
    }
  },
};

export default bench;
