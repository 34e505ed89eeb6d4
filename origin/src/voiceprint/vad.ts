import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { InferenceSession } from 'onnxruntime-web';
import type { OrtBackend } from './onnx-runtime.js';

/** Silero VAD v5 as shipped inside @ricky0123/vad-web, used in place rather than copied. */
export const sileroModelPath = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@ricky0123/vad-web/package.json')),
  'dist',
  'silero_vad_v5.onnx',
);

/** Silero v5 at 16 kHz: 512 new samples per call plus the previous call's last 64 as context. */
export const VAD_FRAME_SAMPLES = 512;
const CONTEXT_SAMPLES = 64;
const STATE_SIZE = 2 * 1 * 128;

export interface VadOptions {
  /** Probability that opens a speech segment, and the lower one that keeps it open (hysteresis). */
  startThreshold: number;
  endThreshold: number;
  /** A pause shorter than this does not end a segment. */
  minSilenceMs: number;
  /** Segments shorter than this are clicks or breaths, not speech. */
  minSpeechMs: number;
  /** Audio kept either side of a segment so word edges survive. */
  padMs: number;
}

export const defaultVadOptions: VadOptions = { startThreshold: 0.5, endThreshold: 0.35, minSilenceMs: 100, minSpeechMs: 250, padMs: 30 };

export interface SpeechSegment {
  start: number;
  end: number;
}

export interface VadResult {
  /** Speech probability per 512-sample frame. */
  probabilities: Float32Array;
  /** Sample ranges of speech, unpadded. */
  segments: SpeechSegment[];
  speechSeconds: number;
  /** The speech with padding, silence between segments dropped. */
  speech: Float32Array;
}

export class SileroVad {
  private constructor(
    private readonly backend: OrtBackend,
    private readonly session: InferenceSession,
    private readonly options: VadOptions,
  ) {}

  static async create(backend: OrtBackend, options: VadOptions = defaultVadOptions): Promise<SileroVad> {
    const session = await backend.ort.InferenceSession.create(new Uint8Array(readFileSync(sileroModelPath)), backend.sessionOptions);
    return new SileroVad(backend, session, options);
  }

  async probabilities(samples: Float32Array): Promise<Float32Array> {
    const { Tensor } = this.backend.ort;
    const frames = Math.floor(samples.length / VAD_FRAME_SAMPLES);
    const probabilities = new Float32Array(frames);
    const sampleRate = new Tensor('int64', BigInt64Array.from([16000n]), []);
    let state = new Tensor('float32', new Float32Array(STATE_SIZE), [2, 1, 128]);
    const input = new Float32Array(CONTEXT_SAMPLES + VAD_FRAME_SAMPLES);
    for (let frame = 0; frame < frames; frame++) {
      const start = frame * VAD_FRAME_SAMPLES;
      input.fill(0, 0, CONTEXT_SAMPLES);
      if (start > 0) input.set(samples.subarray(start - CONTEXT_SAMPLES, start), 0);
      input.set(samples.subarray(start, start + VAD_FRAME_SAMPLES), CONTEXT_SAMPLES);
      const outputs = await this.session.run({ input: new Tensor('float32', input.slice(), [1, input.length]), state, sr: sampleRate });
      probabilities[frame] = (outputs.output!.data as Float32Array)[0]!;
      state = outputs.stateN as typeof state;
    }
    return probabilities;
  }

  async detect(samples: Float32Array): Promise<VadResult> {
    const probabilities = await this.probabilities(samples);
    const segments = segmentSpeech(probabilities, this.options);
    const speechFrames = segments.reduce((sum, segment) => sum + segment.end - segment.start, 0);
    const sampleSegments = segments.map((segment) => ({ start: segment.start * VAD_FRAME_SAMPLES, end: segment.end * VAD_FRAME_SAMPLES }));
    return {
      probabilities,
      segments: sampleSegments,
      speechSeconds: (speechFrames * VAD_FRAME_SAMPLES) / 16000,
      speech: extractPadded(samples, sampleSegments, Math.round((this.options.padMs * 16000) / 1000)),
    };
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}

const framesFor = (ms: number): number => Math.max(1, Math.round((ms * 16) / VAD_FRAME_SAMPLES));

/** Frame ranges of speech from per-frame probabilities, with hysteresis and minimum lengths. */
export function segmentSpeech(probabilities: Float32Array, options: VadOptions): SpeechSegment[] {
  const minSilence = framesFor(options.minSilenceMs);
  const minSpeech = framesFor(options.minSpeechMs);
  const segments: SpeechSegment[] = [];
  let start = -1;
  let silentRun = 0;
  const close = (end: number) => {
    if (end - start >= minSpeech) segments.push({ start, end });
    start = -1;
    silentRun = 0;
  };
  for (let frame = 0; frame < probabilities.length; frame++) {
    const probability = probabilities[frame]!;
    if (start < 0) {
      if (probability >= options.startThreshold) start = frame;
    } else if (probability < options.endThreshold) {
      silentRun++;
      if (silentRun >= minSilence) close(frame - silentRun + 1);
    } else {
      silentRun = 0;
    }
  }
  if (start >= 0) close(probabilities.length - silentRun);
  return segments;
}

function extractPadded(samples: Float32Array, segments: SpeechSegment[], pad: number): Float32Array {
  const ranges: SpeechSegment[] = [];
  for (const segment of segments) {
    const start = Math.max(0, segment.start - pad);
    const end = Math.min(samples.length, segment.end + pad);
    const previous = ranges.at(-1);
    if (previous && start <= previous.end) previous.end = end;
    else ranges.push({ start, end });
  }
  const speech = new Float32Array(ranges.reduce((sum, range) => sum + range.end - range.start, 0));
  let offset = 0;
  for (const range of ranges) {
    speech.set(samples.subarray(range.start, range.end), offset);
    offset += range.end - range.start;
  }
  return speech;
}
