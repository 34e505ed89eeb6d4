import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { InferenceSession } from 'onnxruntime-web';
import type { OrtBackend } from './onnx-runtime.js';
import { SCAN_FRAMES, SCAN_PROBABILITIES, SCAN_STATE_IN, SCAN_STATE_OUT, sileroScanModel } from './vad-scan.js';

/** Silero VAD v5 as shipped inside @ricky0123/vad-web, used in place rather than copied. */
export const sileroModelPath = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@ricky0123/vad-web/package.json')),
  'dist',
  'silero_vad_v5.onnx',
);

/** Silero v5 at 16 kHz: 512 new samples per frame plus the previous frame's last 64 as context. */
export const VAD_FRAME_SAMPLES = 512;
const CONTEXT_SAMPLES = 64;
const INPUT_SAMPLES = CONTEXT_SAMPLES + VAD_FRAME_SAMPLES;
/** Silero's LSTM state, [2, 1, 128]. */
const STATE_SIZE = 2 * 128;

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

/**
 * Frames per session.run: the whole of a typical file in one call, while the input tensor of a
 * 5-minute file stays bounded (1024 × 576 floats, 2.4 MB).
 */
const FRAMES_PER_CALL = 1024;

export class SileroVad {
  private constructor(
    private readonly backend: OrtBackend,
    private readonly session: InferenceSession,
    private readonly options: VadOptions,
  ) {}

  /** Runs Silero inside an ONNX Scan over frames (vad-scan.ts): one call per block of frames, same results. */
  static async create(backend: OrtBackend, options: VadOptions = defaultVadOptions): Promise<SileroVad> {
    const model = sileroScanModel(new Uint8Array(readFileSync(sileroModelPath)));
    const session = await backend.ort.InferenceSession.create(model, backend.sessionOptions);
    return new SileroVad(backend, session, options);
  }

  /** Speech probability of each whole 512-sample frame, the LSTM state carried from frame to frame. */
  async probabilities(samples: Float32Array): Promise<Float32Array> {
    const { Tensor } = this.backend.ort;
    const frames = Math.floor(samples.length / VAD_FRAME_SAMPLES);
    const probabilities = new Float32Array(frames);
    let state = new Tensor('float32', new Float32Array(STATE_SIZE), [2, 1, 128]);
    for (let first = 0; first < frames; first += FRAMES_PER_CALL) {
      const count = Math.min(FRAMES_PER_CALL, frames - first);
      // Each row: the previous frame's last 64 samples (zeros before the start), then the frame.
      const input = new Float32Array(count * INPUT_SAMPLES);
      for (let i = 0; i < count; i++) {
        const start = (first + i) * VAD_FRAME_SAMPLES;
        if (start > 0) input.set(samples.subarray(start - CONTEXT_SAMPLES, start), i * INPUT_SAMPLES);
        input.set(samples.subarray(start, start + VAD_FRAME_SAMPLES), i * INPUT_SAMPLES + CONTEXT_SAMPLES);
      }
      const outputs = await this.session.run({
        [SCAN_FRAMES]: new Tensor('float32', input, [count, 1, INPUT_SAMPLES]),
        [SCAN_STATE_IN]: state,
      });
      probabilities.set((outputs[SCAN_PROBABILITIES]!.data as Float32Array).subarray(0, count), first);
      state = outputs[SCAN_STATE_OUT] as typeof state;
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
