/**
 * The voiceprint engine as the routes use it: create once at start-up, share, close on shutdown;
 * and the decoding other domains use on their own (the spoken consent, provenance's container check).
 */
export { sniffContainer } from './container.js';
export { decodeAudio } from './decode.js';
export {
  createVoiceprintEngine,
  defaultPipelineLimits,
  type EnrollmentResult,
  type TrialSide,
  type VoiceprintEngine,
  type VoiceprintEngineOptions,
} from './engine.js';
export { type ModelEntry, ModelIntegrityError } from './manifest.js';
export type { BackendChoice, BackendName } from './onnx-runtime.js';
export type { EmbedFileResult } from './pipeline.js';
export type { AudioQuality } from './quality.js';
export { cosine, embeddingHash, type TaggedEmbedding } from './similarity.js';
export { ModelContractError } from './speaker-model.js';
export { readSpeechManifest } from './speech-manifest.js';
