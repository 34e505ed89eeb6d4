import { readFileSync } from 'node:fs';
import { SPOKEN_CONSENT_STATEMENT } from '@vip/shared-schema';
import { checkConsentWords, type WordCalibration, wordThresholdsOf } from '../../origin/src/spoken-consent/consent-words.js';
import { WordsChecker } from '../../origin/src/spoken-consent/words.js';
import {
  SYNTHETIC_VOICES,
  type SyntheticVoice,
  syntheticConsent,
  syntheticEnrollment,
} from '../../origin/src/testing/synthetic-consent.js';
import { startTestEngine } from '../../origin/src/testing/voiceprint.js';
import { decodeAudio } from '../../origin/src/voiceprint/decode.js';
import type { Bench, Figure } from './bench.js';
import { median, percentile, round } from './support/stats.js';

/** A phrase as the origin draws them; the synthetic voices recorded every digit. */
const PHRASE = 'six eight zero two nine five';
/** The voice whose consent is timed: flite's awb, the demo voice. */
const TIMED_VOICE: SyntheticVoice = 'flite-awb';
/** Voices of the same person: festival's HTS voice and flite's slt were both made from the CMU ARCTIC speaker slt. */
const SAME_PERSON = new Set(['flite-slt|festival-slt-hts', 'festival-slt-hts|flite-slt']);

/** What calibrate.ts measured on dev/ (origin/src/spoken-consent/calibration.json). */
interface WordsCalibration {
  command: string;
  synthetic?: {
    command: string;
    voices: Record<
      string,
      {
        takes: number;
        statement_first_take_pass: number;
        phrase_first_take_pass: { exact: number; one_word_wrong: number };
        negated_statement_accepted: number;
        other_text_accepted: number;
        swapped_word_accepted: number;
        words_check_cpu_rtf_p50: number;
      }
    >;
  };
  statement: {
    min_score: number;
    recordings: number;
    genuine_pass: number;
    wrong_recording_pass: number;
    one_word_swapped_pass: number;
    before_word_checks: { genuine_pass: number; wrong_recording_pass: number; one_word_swapped_pass: number };
  };
  word: WordCalibration & { genuine_words: number };
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
    "A synthetic voice's spoken consent (flite awb, fixtures/spoken-consent/synthetic/: the current statement, spoken-en-3, then six digits)",
    'is checked as an enrollment checks it: the words by PocketSphinx (`checkConsentWords`: one decode against the grammar of the statement, its',
    'negations and the phrase, one against the free phone loop, every word of the path scored against the loop on its own frames)',
    'and the voice by the speaker model (the recording embedded and',
    "compared with the speaker's enrollment at the model's sample-vs-enrolled point). Each is timed on its own, one call at a time,",
    'after one warm-up call; the decoder load is timed once. The voice check is also run on every pair of the five synthetic voices',
    "(each voice's consent against each voice's own enrollment). How often the words check passes genuine and wrong readings is measured",
    'on dev/ and on the synthetic voices by calibrate.ts, and the voice check on dev/ by evaluate.ts, not here: the notes give those',
    'figures and their commands, read from the files they wrote.',
  ].join(' '),
  async run({ quick }) {
    const runs = quick ? 2 : 8;
    const recording = await syntheticConsent(TIMED_VOICE, PHRASE);
    const { samples, durationSeconds } = await decodeAudio(recording, { maxBytes: 2 ** 24, maxSeconds: 60, minSeconds: 0 });
    const text = { statement: SPOKEN_CONSENT_STATEMENT.text, negations: SPOKEN_CONSENT_STATEMENT.negations, phrase: PHRASE };
    const calibration = readJson<WordsCalibration>(new URL('../../origin/src/spoken-consent/calibration.json', import.meta.url));
    const thresholds = {
      minStatementScore: calibration.statement.min_score,
      word: wordThresholdsOf(calibration.word),
      phraseMaxWrongWords: 1,
    };

    const loadStarted = performance.now();
    const checker = await WordsChecker.create();
    const loadMs = performance.now() - loadStarted;
    const engine = await startTestEngine({ threads: 1 });
    try {
      const enrollment = await engine.embedMany(syntheticEnrollment(TIMED_VOICE));
      const wordsMs: number[] = [];
      const wordsCpuMs: number[] = [];
      const voiceMs: number[] = [];
      for (let run = -1; run < runs; run++) {
        let started = performance.now();
        const cpuStarted = process.cpuUsage();
        const verdict = checkConsentWords(checker, samples, text, thresholds);
        const words = performance.now() - started;
        const cpu = process.cpuUsage(cpuStarted);
        if (!verdict.statement.passed || !verdict.phrase.passed)
          throw new Error(`the synthetic consent was refused: heard "${verdict.heard}"`);
        started = performance.now();
        const similarity = engine.cosine(await engine.embedFile(recording), enrollment);
        const voice = performance.now() - started;
        if (similarity < engine.points(enrollment.model).sample_vs_enrolled.verify)
          throw new Error(`the synthetic consent's voice scored ${similarity}`);
        if (run >= 0) {
          wordsMs.push(words);
          wordsCpuMs.push((cpu.user + cpu.system) / 1000);
          voiceMs.push(voice);
        }
      }
      // Each synthetic voice's consent against each voice's enrollment, at the point the service uses.
      const voices = Object.keys(SYNTHETIC_VOICES) as SyntheticVoice[];
      const enrollments = new Map<SyntheticVoice, Awaited<ReturnType<typeof engine.embedMany>>>();
      const consents = new Map<SyntheticVoice, Awaited<ReturnType<typeof engine.embedFile>>>();
      for (const voice of voices) {
        enrollments.set(voice, await engine.embedMany(syntheticEnrollment(voice)));
        consents.set(voice, await engine.embedFile(await syntheticConsent(voice, PHRASE)));
      }
      const verifyPoint = engine.points(enrollment.model).sample_vs_enrolled.verify;
      const accepted = (reader: SyntheticVoice, owner: SyntheticVoice) =>
        engine.cosine(consents.get(reader)!, enrollments.get(owner)!) >= verifyPoint;
      const ownAccepted = voices.filter((voice) => accepted(voice, voice)).length;
      const otherPairs = voices.flatMap((reader) =>
        voices.filter((owner) => owner !== reader && !SAME_PERSON.has(`${reader}|${owner}`)).map((owner) => [reader, owner] as const),
      );
      const otherAccepted = otherPairs.filter(([reader, owner]) => accepted(reader, owner));
      const samePersonAccepted = [...SAME_PERSON].filter((pair) => {
        const [reader, owner] = pair.split('|') as [SyntheticVoice, SyntheticVoice];
        return accepted(reader, owner);
      }).length;
      const synthetic = calibration.synthetic;
      const perVoice = synthetic
        ? Object.entries(synthetic.voices)
            .map(
              ([voice, figures]) =>
                `${voice}: statement ${percent(figures.statement_first_take_pass)}, phrase exact ${percent(figures.phrase_first_take_pass.exact)} (at most one word wrong ${percent(figures.phrase_first_take_pass.one_word_wrong)}), negated statement accepted ${percent(figures.negated_statement_accepted)}, other text accepted ${percent(figures.other_text_accepted)}, one word swapped accepted ${percent(figures.swapped_word_accepted)}, words check ${figures.words_check_cpu_rtf_p50}x real time in CPU time (${figures.takes} takes)`,
            )
            .join('; ')
        : 'not measured (calibration.json has no synthetic section)';
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
          goal: { atMost: 0.25 },
        },
        {
          // The decoder runs on this one thread: its CPU time is what the check costs, whatever else a shared machine runs.
          key: 'spoken_consent.words.cpu_rtf',
          label: 'words check: real-time factor in CPU time',
          value: round(median(wordsCpuMs) / 1000 / durationSeconds, 3),
          unit: 'ratio',
          goal: { atMost: 0.25 },
        },
        {
          key: 'spoken_consent.voice.p50_ms',
          label: 'voice check (embedding the consent recording): p50',
          value: round(median(voiceMs), 1),
          unit: 'ms',
        },
        {
          key: 'spoken_consent.synthetic.own_voice_accepted',
          label: `voice check, synthetic voices: own consent accepted (of ${voices.length})`,
          value: ownAccepted,
          unit: 'voices',
        },
        {
          key: 'spoken_consent.synthetic.other_voice_accepted',
          label: `voice check, synthetic voices: another speaker's consent accepted (of ${otherPairs.length} pairs)`,
          value: otherAccepted.length,
          unit: 'pairs',
        },
      ];
      return {
        figures,
        notes: [
          `Synthetic voices, words (\`${synthetic?.command ?? 'npx tsx tools/spoken-consent-calibration/calibrate.ts --sets synthetic'}\`, first takes of spoken-en-3 and a drawn phrase): ${perVoice}.`,
          `Synthetic voices, voice check: ${ownAccepted} of ${voices.length} voices' own consents accepted; another speaker's consent accepted in ${otherAccepted.length} of ${otherPairs.length} pairs${otherAccepted.length > 0 ? ` (${otherAccepted.map(([reader, owner]) => `${reader} for ${owner}`).join(', ')})` : ''}; flite slt and festival's slt HTS voice, one person's voice by two synthesizers, accepted for each other in ${samePersonAccepted} of 2 directions.`,
          `Words, on dev/ (\`${calibration.command}\`, calibration.json): the statement passes ${percent(calibration.statement.genuine_pass)} of ${calibration.statement.recordings} genuine readings (a recording against its own transcript), ${percent(calibration.statement.wrong_recording_pass)} of wrong ones (another speaker's recording against that text) and ${percent(calibration.statement.one_word_swapped_pass)} of readings with one word swapped for one the speaker did not say, at min_score ${calibration.statement.min_score} nats/frame and the word bounds (each word's evidence against the phone loop, its score in nats per frame times the square root of its frames, at least ${calibration.word.min_evidence}, ${calibration.word.min_frames_per_phone} to ${calibration.word.max_frames_per_phone} frames per phone, from ${calibration.word.genuine_words} genuine words); without the word bounds ${percent(calibration.statement.before_word_checks.genuine_pass)}, ${percent(calibration.statement.before_word_checks.wrong_recording_pass)} and ${percent(calibration.statement.before_word_checks.one_word_swapped_pass)}.`,
          `Phrase, on dev/'s ${calibration.phrase.recordings} recorded digit strings: read back exactly ${percent(calibration.phrase.exact.genuine_pass)}, with at most one word wrong (the default) ${percent(calibration.phrase.one_word_wrong.genuine_pass)}; another speaker's digit string passes ${percent(calibration.phrase.one_word_wrong.other_phrase_pass)}.`,
          `Voice, on dev/ (\`npx tsx tools/voiceprint-training/evaluate.ts --model ${engine.model.name} --write\`, sample-vs-enrolled): at the point ${speaker.at_verify.threshold}, another speaker's recording is accepted ${round(speaker.at_verify.far_pct, 2)} % of ${speaker.impostor} trials and the speaker's own refused ${round(speaker.at_verify.frr_pct, 2)} % of ${speaker.genuine}; accepted by set: ${perSet}.`,
        ],
      };
    } finally {
      checker.close();
      await engine.close();
    }
  },
};

export default bench;
