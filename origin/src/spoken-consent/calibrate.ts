/**
 * Calibrates the spoken-consent words check on read speech with known text (speechocean762 in
 * ../shared/speech/dev) and writes origin/src/spoken-consent/calibration.json:
 *
 *   npx tsx origin/src/spoken-consent/calibrate.ts [--dir ../shared/speech/dev] [--limit 300]
 *
 * `--limit` bounds the sentence recordings and the digit-string recordings each (every decode costs
 * about half a second of CPU).
 *
 * Statement: each recording decoded against a grammar of its own transcript (a genuine reading) and of
 * another speaker's transcript (a wrong recording for that text); the threshold is the lowest
 * phone-loop score at which at most 1% of the wrong recordings pass. Phrase: each digit-string
 * recording read back free against its own digits and another speaker's digits.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { limits } from '@vip/shared-schema';
import { decodeAudio, readSpeechManifest } from '../voiceprint/index.js';
import { PHRASE_WORDS, phraseErrors } from './consent-words.js';
import { WordsChecker } from './words.js';

const IMPOSTOR_PASS_TARGET = 0.01;
const { values } = parseArgs({
  options: { dir: { type: 'string', default: '../shared/speech/dev' }, limit: { type: 'string', default: '300' } },
});
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

const checker = await WordsChecker.create();
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

const genuine: number[] = [];
const impostor: number[] = [];
for (const [index, row] of sample.entries()) {
  const audio = await audioOf(row.file);
  const own = checker.decode(audio, `(${row.text})`);
  genuine.push(own.text === row.text ? own.score : Number.NEGATIVE_INFINITY);
  const other = otherSpeakers(sample, index);
  const wrong = checker.decode(audio, `(${other.text})`);
  impostor.push(wrong.text === other.text ? wrong.score : Number.NEGATIVE_INFINITY);
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
checker.close();

const share = (list: number[], pass: (value: number) => boolean) =>
  Math.round((list.filter(pass).length / Math.max(1, list.length)) * 1000) / 1000;
const sortedImpostor = impostor.filter(Number.isFinite).sort((a, b) => b - a);
// The lowest threshold at which no more than the target share of wrong recordings passes.
const allowed = Math.floor(IMPOSTOR_PASS_TARGET * impostor.length);
const minStatementScore = Math.round(((sortedImpostor[allowed] ?? 0) + 0.005) * 100) / 100;
const quantile = (list: number[], q: number) => {
  const sorted = list.filter(Number.isFinite).sort((a, b) => a - b);
  return Math.round((sorted[Math.floor(q * (sorted.length - 1))] ?? 0) * 100) / 100;
};

const calibration = {
  data: path.relative(process.cwd(), dir),
  command: `npx tsx origin/src/spoken-consent/calibrate.ts --dir ${values.dir} --limit ${values.limit}`,
  statement: {
    min_score: minStatementScore,
    recordings: sample.length,
    genuine_pass: share(genuine, (score) => score >= minStatementScore),
    wrong_recording_pass: share(impostor, (score) => score >= minStatementScore),
    genuine_score_quantiles: { p05: quantile(genuine, 0.05), p50: quantile(genuine, 0.5) },
    wrong_score_quantiles: { p50: quantile(impostor, 0.5), p95: quantile(impostor, 0.95), p99: quantile(impostor, 0.99) },
  },
  phrase: {
    recordings: digitSample.length,
    exact: { genuine_pass: share(phraseGenuine, (n) => n === 0), other_phrase_pass: share(phraseImpostor, (n) => n === 0) },
    one_word_wrong: { genuine_pass: share(phraseGenuine, (n) => n <= 1), other_phrase_pass: share(phraseImpostor, (n) => n <= 1) },
  },
};
writeFileSync(new URL('./calibration.json', import.meta.url), `${JSON.stringify(calibration, null, 2)}\n`);
console.log(JSON.stringify(calibration, null, 2));
