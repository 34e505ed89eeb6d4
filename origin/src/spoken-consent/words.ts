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
/** Frames per second of the decoder's features. */
const FRAME_RATE = 100;
/**
 * soundswallower 0.6's segment iterator (`seg_iter_s` in its search_module.h) holds, after a v-table,
 * a search and a word pointer (4 bytes each in wasm32), the start and end frames (int32) and then the
 * acoustic score: the package hands out the frames but not the score, so it is read from the struct.
 * `pathSegments` checks the frames it reads there against the package's own call on every segment.
 */
const SEGMENT_START_OFFSET = 12;
const SEGMENT_END_OFFSET = 16;
const SEGMENT_ACOUSTIC_OFFSET = 20;

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
  /** Phones of the pronunciation the decoder chose (a word has at least 3 frames per phone). */
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
  /** Two int32: where the package writes a segment's start and end frames. */
  private readonly framesPointer: number;
  private readonly phoneLoop: string;
  private readonly phonesOfWord = new Map<string, number>();

  private constructor(
    private readonly module: SoundSwallowerModule,
    private readonly decoder: Decoder,
    phones: string[],
  ) {
    this.scorePointer = module._malloc(4);
    this.framesPointer = module._malloc(8);
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
    const loopSegments = this.pathSegments();
    const sentence = this.search(audio, jsgf('sentence', ruleBody, rules));
    const frames = Math.max(1, loop.frames);
    if (sentence.text === '') return { text: '', frames, score: Number.NEGATIVE_INFINITY, words: [] };
    return {
      text: sentence.text,
      frames,
      score: ((sentence.score - loop.score) * SCORE_TO_NATS) / frames,
      words: this.pathSegments()
        .filter((segment) => !isFiller(segment.name))
        .map((segment) => ({
          word: withoutVariant(segment.name),
          frames: segment.end - segment.start,
          phones: this.phoneCount(segment.name),
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
    this.module._free(this.framesPointer);
    this.decoder.delete();
  }

  /**
   * The last search's best path as frame spans with their acoustic scores (relative to the best senone
   * of each frame, as the path score is): the per-word evidence the path score sums away, without
   * aligning the audio a second time.
   */
  private pathSegments(): PathSegment[] {
    const segments: PathSegment[] = [];
    const cdecoder = (this.decoder as unknown as { cdecoder: number }).cdecoder;
    const wasm = this.module as unknown as SegmentCalls;
    for (let segment = wasm._decoder_seg_iter(cdecoder); segment !== 0; segment = wasm._seg_iter_next(segment)) {
      wasm._seg_iter_frames(segment, this.framesPointer, this.framesPointer + 4);
      const memory = new DataView(this.module.HEAP8.buffer);
      const start = memory.getInt32(this.framesPointer, true);
      const last = memory.getInt32(this.framesPointer + 4, true);
      if (memory.getInt32(segment + SEGMENT_START_OFFSET, true) !== start || memory.getInt32(segment + SEGMENT_END_OFFSET, true) !== last)
        throw new Error("soundswallower's segment layout is not the one words.ts reads scores from: check SEGMENT_ACOUSTIC_OFFSET");
      // The grammar's empty transitions are segments of no frames.
      if (last < start) continue;
      segments.push({
        name: cString(this.module.HEAPU8, wasm._seg_iter_word(segment)),
        start,
        end: last + 1,
        nats: memory.getInt32(segment + SEGMENT_ACOUSTIC_OFFSET, true) * SCORE_TO_NATS,
      });
    }
    return segments;
  }

  /** Phones of a dictionary entry (a word or a variant, word(2)), as the decoder spells it. */
  private phoneCount(name: string): number {
    let count = this.phonesOfWord.get(name);
    if (count === undefined) {
      count = (this.decoder.lookup_word(name) ?? '').split(' ').filter(Boolean).length || 1;
      this.phonesOfWord.set(name, count);
    }
    return count;
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
    return { text, score, frames: Math.round((audio.length / SAMPLE_RATE) * FRAME_RATE) };
  }
}

export interface AlignedWord {
  word: string;
  start: number;
  end: number;
}

interface PathSegment {
  /** The dictionary's name: a word, a pronunciation variant (word(2)), a phone of the loop, or a filler (<sil>, [noise]). */
  name: string;
  /** Frames [start, end). */
  start: number;
  end: number;
  /** Acoustic score of the span on the path (natural log). */
  nats: number;
}

/** The package's segment iterator, as its WASM exports it (index.d.ts leaves it out). */
interface SegmentCalls {
  _decoder_seg_iter(decoder: number): number;
  _seg_iter_next(segment: number): number;
  _seg_iter_frames(segment: number, start: number, end: number): void;
  _seg_iter_word(segment: number): number;
}

/** The score the phone loop gave frames [start, end): each of its segments counts for the share of its frames that lie there. */
function natsWithin(segments: PathSegment[], start: number, end: number): number {
  let nats = 0;
  for (const segment of segments) {
    const overlap = Math.min(end, segment.end) - Math.max(start, segment.start);
    if (overlap > 0) nats += (segment.nats * overlap) / (segment.end - segment.start);
  }
  return nats;
}

const utf8 = new TextDecoder();
/** A NUL-terminated string of the WASM memory. */
function cString(memory: Uint8Array, pointer: number): string {
  if (pointer === 0) return '';
  return utf8.decode(memory.subarray(pointer, memory.indexOf(0, pointer)));
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
