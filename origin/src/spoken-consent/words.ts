import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import createModule, { type Decoder, type SoundSwallowerModule } from 'soundswallower';

/**
 * The words of a recording, decoded offline by PocketSphinx (the `soundswallower` WASM build) against
 * a JSGF grammar, and scored against a free phone loop: a grammar always yields one of its sentences,
 * so what tells a reading of that sentence from other speech is how much better the sentence explains
 * the audio than any sequence of English phones does.
 */

const packageDir = path.dirname(createRequire(import.meta.url).resolve('soundswallower'));
const SAMPLE_RATE = 16000;
/** PocketSphinx scores are log base 1.0001, shifted right by 10 bits (SENSCR_SHIFT). */
const SCORE_TO_NATS = 1024 * Math.log(1.0001);
/** PocketSphinx cannot decode pure digital silence; noise far below any microphone's floor fixes it. */
const DITHER = 1e-4;
/** Frames per second of the decoder's features: an alignment's times, in seconds, are multiples of 1/100. */
const FRAME_RATE = 100;
/**
 * An alignment segment's `p` is 1.0001 to the power of its acoustic score, and that score is in the
 * model's units shifted right by 10 bits (SENSCR_SHIFT), relative to the best senone of each frame:
 * its natural log times 1024 is the segment's score in nats. `p` is printed with three decimals, so a
 * segment scored 0.000 is floored at half the last digit.
 */
const alignedNats = (p: number) => Math.log(Math.max(p, 0.0005)) * 1024;

export interface DecodedWords {
  /** The grammar's sentence that best explains the audio, lower case, words separated by one space; empty when none fits. */
  text: string;
  /**
   * Per 10 ms frame, how much better (natural log) the grammar explains the audio than a free phone
   * loop: high for a reading of a sentence of the grammar, near or below zero for other speech.
   */
  score: number;
  frames: number;
  /** The words of `text` where the audio puts them, pauses left out (empty when nothing fits). */
  words: WordScore[];
}

/** One word of a decoded sentence, judged on its own frames. */
export interface WordScore {
  word: string;
  frames: number;
  /** Phones of the pronunciation the decoder aligned (a word has at least 3 frames per phone). */
  phones: number;
  /**
   * Per frame of the word, how much better (natural log, acoustic only) the word explains its frames
   * than the free phone loop explains the same frames: near zero or above for a word that was said,
   * far below for a word the grammar forced onto other sounds.
   */
  score: number;
}

/** Phones of the model, less silence and noise: the words of the free phone loop. */
function phonesOf(phoneset: Record<string, string>): string[] {
  return Object.keys(phoneset).filter((phone) => /^[A-Z]+$/.test(phone) && phone !== 'SIL');
}

export class WordsChecker {
  private readonly scorePointer: number;
  private readonly phoneLoop: string;

  private constructor(
    private readonly module: SoundSwallowerModule,
    private readonly decoder: Decoder,
    phones: string[],
  ) {
    this.scorePointer = module._malloc(4);
    // Phones enter the dictionary as words of their own, under names no English word has.
    decoder.add_words(...phones.map((phone): [string, string] => [phoneWord(phone), phone]));
    this.phoneLoop = jsgf('phones', `(${phones.map(phoneWord).join(' | ')})+`);
  }

  /** Loads the US English model shipped inside the package (about 10 MB, a second or two). */
  static async create(): Promise<WordsChecker> {
    const module = await createModule({ modelBase: `${packageDir}/model/`, print: () => {}, printErr: () => {} } as never);
    const decoder = new module.Decoder({
      loglevel: 'ERROR',
      samprate: SAMPLE_RATE,
      // Wider than the defaults: with them a synthetic reading of a negation fell off the beam of its own sentence.
      beam: 1e-80,
      pbeam: 1e-80,
      wbeam: 1e-60,
    });
    await decoder.initialize();
    const phoneset = JSON.parse(readFileSync(path.join(packageDir, 'model/en-us/phoneset.json'), 'utf8')) as Record<string, string>;
    return new WordsChecker(module, decoder, phonesOf(phoneset));
  }

  /** Whether the dictionary can spell the word (grammars may only use such words). */
  knows(word: string): boolean {
    return this.decoder.lookup_word(word) !== null;
  }

  /** Decodes mono 16 kHz audio against a JSGF rule body (e.g. `(i agree | i do not agree) <digits>`, with `rules`). */
  decode(samples: Float32Array, ruleBody: string, rules: Record<string, string> = {}): DecodedWords {
    const audio = dithered(samples);
    const loop = this.search(audio, this.phoneLoop);
    const loopSegments = this.alignedSegments();
    const sentence = this.search(audio, jsgf('sentence', ruleBody, rules));
    const frames = Math.max(1, loop.frames);
    if (sentence.text === '') return { text: '', frames, score: Number.NEGATIVE_INFINITY, words: [] };
    return {
      text: sentence.text,
      frames,
      score: ((sentence.score - loop.score) * SCORE_TO_NATS) / frames,
      words: this.alignedSegments()
        .filter((segment) => !isFiller(segment.name))
        .map((segment) => ({
          word: withoutVariant(segment.name),
          frames: segment.end - segment.start,
          phones: segment.phones,
          score: roundTo((segment.nats - natsWithin(loopSegments, segment.start, segment.end)) / (segment.end - segment.start), 3),
        })),
    };
  }

  /** The grammar's best sentence alone, without the phone-loop score (half the work): for reading back a phrase. */
  decodeText(samples: Float32Array, ruleBody: string, rules: Record<string, string> = {}): string {
    return this.search(dithered(samples), jsgf('sentence', ruleBody, rules)).text;
  }

  /** Where each word of a known text lies in the audio (forced alignment), in seconds, pauses left out. */
  align(samples: Float32Array, text: string): AlignedWord[] {
    this.decoder.set_align_text(text);
    this.decoder.start();
    this.decoder.process_audio(dithered(samples), false, true);
    this.decoder.stop();
    return (this.decoder.get_alignment().w ?? [])
      .filter((segment) => !isFiller(segment.t))
      .map((segment) => ({ word: withoutVariant(segment.t), start: segment.b, end: segment.b + segment.d }));
  }

  close(): void {
    this.module._free(this.scorePointer);
    this.decoder.delete();
  }

  /**
   * The last search's best path, aligned again to its phones (the decoder's align level 1), as frame
   * spans with their acoustic scores: the per-word evidence the path score sums away.
   */
  private alignedSegments(): AlignedSegment[] {
    return (this.decoder.get_alignment({ align_level: 1 }).w ?? []).map((segment) => {
      const start = Math.round(segment.b * FRAME_RATE);
      return {
        name: segment.t,
        start,
        end: start + Math.max(1, Math.round(segment.d * FRAME_RATE)),
        phones: segment.w?.length ?? 1,
        nats: alignedNats(segment.p),
      };
    });
  }

  private search(audio: Float32Array, grammar: string): { text: string; score: number; frames: number } {
    this.decoder.set_grammar(grammar);
    this.decoder.start();
    this.decoder.process_audio(audio, false, true);
    this.decoder.stop();
    // get_text() does not hand out the path score; the C call it wraps does.
    const hyp = (this.module as unknown as { _decoder_hyp(decoder: number, score: number): number })._decoder_hyp(
      (this.decoder as unknown as { cdecoder: number }).cdecoder,
      this.scorePointer,
    );
    const text =
      hyp === 0
        ? ''
        : this.decoder
            .get_text()
            .split(/\s+/)
            .filter((word) => word !== '')
            .join(' ');
    const score = new DataView(this.module.HEAP8.buffer).getInt32(this.scorePointer, true);
    return { text, score, frames: Math.round((audio.length / SAMPLE_RATE) * 100) };
  }
}

export interface AlignedWord {
  word: string;
  start: number;
  end: number;
}

interface AlignedSegment {
  /** The dictionary's name: a word, a pronunciation variant (word(2)), a phone of the loop, or a filler (<sil>, [noise]). */
  name: string;
  /** Frames [start, end). */
  start: number;
  end: number;
  phones: number;
  nats: number;
}

/** The score the phone loop gave frames [start, end): each of its segments counts for the share of its frames that lie there. */
function natsWithin(segments: AlignedSegment[], start: number, end: number): number {
  let nats = 0;
  for (const segment of segments) {
    const overlap = Math.min(end, segment.end) - Math.max(start, segment.start);
    if (overlap > 0) nats += (segment.nats * overlap) / (segment.end - segment.start);
  }
  return nats;
}

const isFiller = (name: string) => name.startsWith('<') || name.startsWith('[') || name === '(NULL)';
/** A pronunciation variant is named word(2) in the dictionary. */
const withoutVariant = (name: string) => name.replace(/\(\d+\)$/, '');
const roundTo = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
const phoneWord = (phone: string) => `phone_${phone.toLowerCase()}`;

function jsgf(name: string, body: string, rules: Record<string, string> = {}): string {
  const others = Object.entries(rules).map(([rule, rhs]) => `<${rule}> = ${rhs};\n`);
  return `#JSGF V1.0;\ngrammar ${name};\npublic <${name}> = ${body};\n${others.join('')}`;
}

function dithered(samples: Float32Array): Float32Array {
  const out = new Float32Array(samples.length);
  // A fixed generator: the same audio always gets the same decision.
  let state = 0x9e3779b9;
  for (let i = 0; i < samples.length; i++) {
    state = (state * 1664525 + 1013904223) >>> 0;
    out[i] = samples[i]! + (state / 0xffffffff - 0.5) * DITHER;
  }
  return out;
}
