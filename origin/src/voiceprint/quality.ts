import { VAD_FRAME_SAMPLES, type VadResult } from './vad.js';

/** What the enroll response reports about a recording (snake_case: it goes out as JSON as is). */
export interface AudioQuality {
  duration_seconds: number;
  speech_seconds: number;
  /** Share of frames at full scale; above ~0.01 the recording is audibly distorted. */
  clipping_ratio: number;
  /** Speech power over the power of the frames the VAD called non-speech, in dB. */
  snr_db: number;
}

const SNR_CEILING_DB = 100;
const MIN_NOISE_FRAMES = 5;

const round = (value: number, digits: number): number => Math.round(value * 10 ** digits) / 10 ** digits;

export function assessQuality(samples: Float32Array, vad: VadResult, durationSeconds: number, clippingRatio: number): AudioQuality {
  return {
    duration_seconds: round(durationSeconds, 3),
    speech_seconds: round(vad.speechSeconds, 3),
    clipping_ratio: round(clippingRatio, 6),
    snr_db: round(estimateSnrDb(samples, vad), 1),
  };
}

/** One quality for an enrollment of several files: totals, clipping by duration, SNR by speech. */
export function combineQuality(parts: AudioQuality[]): AudioQuality {
  const duration = parts.reduce((sum, part) => sum + part.duration_seconds, 0);
  const speech = parts.reduce((sum, part) => sum + part.speech_seconds, 0);
  return {
    duration_seconds: round(duration, 3),
    speech_seconds: round(speech, 3),
    clipping_ratio: round(parts.reduce((sum, part) => sum + part.clipping_ratio * part.duration_seconds, 0) / (duration || 1), 6),
    snr_db: round(parts.reduce((sum, part) => sum + part.snr_db * part.speech_seconds, 0) / (speech || 1), 1),
  };
}

/**
 * Frame powers split by the VAD decision. When the recording has (almost) no pauses, the quietest
 * tenth of the frames stands in for the noise floor.
 */
function estimateSnrDb(samples: Float32Array, vad: VadResult): number {
  const frames = vad.probabilities.length;
  const isSpeech = new Uint8Array(frames);
  for (const segment of vad.segments) isSpeech.fill(1, segment.start / VAD_FRAME_SAMPLES, segment.end / VAD_FRAME_SAMPLES);
  const speechPowers: number[] = [];
  const noisePowers: number[] = [];
  for (let frame = 0; frame < frames; frame++) {
    let power = 0;
    for (let i = frame * VAD_FRAME_SAMPLES; i < (frame + 1) * VAD_FRAME_SAMPLES; i++) power += samples[i]! * samples[i]!;
    (isSpeech[frame] ? speechPowers : noisePowers).push(power / VAD_FRAME_SAMPLES);
  }
  if (speechPowers.length === 0) return 0;
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  let noise: number;
  if (noisePowers.length >= MIN_NOISE_FRAMES) noise = mean(noisePowers);
  else {
    const sorted = [...speechPowers, ...noisePowers].sort((a, b) => a - b);
    noise = mean(sorted.slice(0, Math.max(1, Math.floor(sorted.length / 10))));
  }
  const signal = Math.max(mean(speechPowers) - noise, 0);
  if (noise <= 0) return SNR_CEILING_DB;
  if (signal === 0) return 0;
  return Math.min(SNR_CEILING_DB, Math.max(-SNR_CEILING_DB, 10 * Math.log10(signal / noise)));
}
