import { limits as sharedLimits } from '@vip/shared-schema/limits';
import { ProblemError } from '@vip/shared-schema/problem';
import { readPcmWatermark, type WatermarkDetection } from '@vip/shared-schema/watermark/index';
import { DECODED_SAMPLE_RATE, type DecodeLimits, decodeAudio } from './decode.js';
import type { ModelEntry } from './manifest.js';
import type { OrtBackend } from './onnx-runtime.js';
import { type AudioQuality, assessQuality } from './quality.js';
import type { TaggedEmbedding } from './similarity.js';
import { SpeakerModel } from './speaker-model.js';
import { SileroVad } from './vad.js';

export interface PipelineLimits extends DecodeLimits {
  /** Detected speech a single file needs to give a usable embedding. */
  minSpeechSeconds: number;
}

export interface EmbedFileResult extends TaggedEmbedding {
  speechSeconds: number;
  quality: AudioQuality;
  /** The audio watermark read from the decoded audio, when asked for (`readWatermark`). */
  watermark?: WatermarkDetection;
}

export interface StageTimings {
  decodeMs: number;
  vadMs: number;
  embedMs: number;
}

export interface EmbedFileHooks {
  /** Awaited once decoding is done, before the first ONNX call. */
  beforeInference?: () => Promise<void>;
  /** Adds each stage's duration. */
  timings?: StageTimings;
  /**
   * Also read the audio watermark (docs/WATERMARK.md) from the decoded 16 kHz audio, in at most
   * `limits.watermarkDetectMaxWindows` windows, so a file is decoded once for both.
   */
  readWatermark?: boolean;
}

/** The detector over decoded audio, in its bounded number of windows (docs/WATERMARK.md#bounded-detection). */
const watermarkOf = (samples: Float32Array) =>
  readPcmWatermark(samples, DECODED_SAMPLE_RATE, { maxWindows: sharedLimits.watermarkDetectMaxWindows });

/** decode → resample → VAD → fbank → model, for one file, on the calling thread. */
export class VoiceprintPipeline {
  private constructor(
    private readonly vad: SileroVad,
    private readonly model: SpeakerModel,
    private readonly limits: PipelineLimits,
  ) {}

  static async create(options: {
    backend: OrtBackend;
    entry: ModelEntry;
    modelBytes: Uint8Array;
    limits: PipelineLimits;
  }): Promise<VoiceprintPipeline> {
    const [vad, model] = await Promise.all([
      SileroVad.create(options.backend),
      SpeakerModel.load(options.entry, options.modelBytes, options.backend),
    ]);
    return new VoiceprintPipeline(vad, model, options.limits);
  }

  async embedFile(bytes: Uint8Array, hooks: EmbedFileHooks = {}): Promise<EmbedFileResult> {
    const started = performance.now();
    const audio = await decodeAudio(bytes, this.limits);
    const watermark = hooks.readWatermark ? watermarkOf(audio.samples) : undefined;
    const decoded = performance.now();
    await hooks.beforeInference?.();
    const vad = await this.vad.detect(audio.samples);
    const detected = performance.now();
    if (vad.segments.length === 0) throw new ProblemError('no_speech', 'No speech was detected in the audio.');
    if (vad.speechSeconds < this.limits.minSpeechSeconds) {
      throw new ProblemError(
        'too_short',
        `Only ${vad.speechSeconds.toFixed(2)} s of speech was detected; at least ${this.limits.minSpeechSeconds} s is needed.`,
      );
    }
    const embedding = await this.model.embed(vad.speech);
    const { timings } = hooks;
    if (timings) {
      timings.decodeMs += decoded - started;
      timings.vadMs += detected - decoded;
      timings.embedMs += performance.now() - detected;
    }
    return {
      embedding,
      model: this.model.entry.name,
      speechSeconds: vad.speechSeconds,
      quality: assessQuality(audio.samples, vad, audio.durationSeconds, audio.clippingRatio),
      ...(watermark && { watermark }),
    };
  }

  /** The audio watermark of a file, decoded as for a voiceprint (the decoder's bounds and problems), without the model. */
  async readWatermark(bytes: Uint8Array): Promise<WatermarkDetection> {
    return watermarkOf((await decodeAudio(bytes, this.limits)).samples);
  }

  async release(): Promise<void> {
    await Promise.all([this.vad.release(), this.model.release()]);
  }
}
