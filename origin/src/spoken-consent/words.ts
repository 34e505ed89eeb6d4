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

export interface DecodedWords {
  /** The grammar's sentence that best explains the audio, lower case, words separated by one space; empty when none fits. */
  text: string;
  /**
   * Per 10 ms frame, how much better (natural log) the grammar explains the audio than a free phone
   * loop: high for a reading of a sentence of the grammar, near or below zero for other speech.
   */
  score: number;
  frames: number;
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
    const sentence = this.search(audio, jsgf('sentence', ruleBody, rules));
    const frames = Math.max(1, loop.frames);
    return {
      text: sentence.text,
      frames,
      score: sentence.text === '' ? Number.NEGATIVE_INFINITY : ((sentence.score - loop.score) * SCORE_TO_NATS) / frames,
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
    return (
      (this.decoder.get_alignment().w ?? [])
        .filter((segment) => !segment.t.startsWith('<') && !segment.t.startsWith('['))
        // A pronunciation variant is named word(2) in the dictionary.
        .map((segment) => ({ word: segment.t.replace(/\(\d+\)$/, ''), start: segment.b, end: segment.b + segment.d }))
    );
  }

  close(): void {
    this.module._free(this.scorePointer);
    this.decoder.delete();
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
