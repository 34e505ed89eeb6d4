import os from 'node:os';
import path from 'node:path';
import { TRIAL_CONDITIONS, type TrialCondition } from '@vip/shared-schema';
import { limits } from '@vip/shared-schema/limits';
import { ProblemError } from '@vip/shared-schema/problem';
import type { FileCredentials } from '@vip/shared-schema/provenance/credentials';
import type { WatermarkDetection } from '@vip/shared-schema/watermark/index';
import { startWorker } from '../worker-threads.js';
import { type Cohort, cohortStats, normalizedScore, readVerifiedCohort } from './cohort.js';
import {
  bundledManifestPath,
  type ModelEntry,
  ModelIntegrityError,
  modelPath,
  readManifest,
  readVerifiedModel,
  selectModel,
} from './manifest.js';
import type { BackendChoice, BackendName } from './onnx-runtime.js';
import {
  defaultSearchTargets,
  type OperatingPoints,
  operatingPoints,
  type SearchTargets,
  scoreOf,
  type TrialScore,
  trialScore,
  uncalibratedPoints,
} from './operating-points.js';
import type { EmbedFileResult, PipelineLimits } from './pipeline.js';
import { WorkerPool } from './pool.js';
import { type AudioQuality, combineQuality } from './quality.js';
import { averageEmbeddings, cosine, embeddingHash, type TaggedEmbedding } from './similarity.js';
import { checkModelMetadata } from './speaker-model.js';
import type { WorkerSetup } from './worker-protocol.js';

export interface VoiceprintEngineOptions {
  /** Where `npm run model:fetch` put downloaded models (DATA_DIR/models). Defaults to the manifest's folder. */
  modelsDir?: string;
  manifestPath?: string;
  /** Run this manifest model instead of the automatic choice (fetched production model, else bundled). */
  model?: string;
  backend?: BackendChoice;
  /** Worker threads; each runs one file at a time on one core. */
  threads?: number;
  maxQueue?: number;
  taskTimeoutMs?: number;
  /** How long a thread may read one file's Content Credentials; default `limits.manifestReadDeadlineMs`. */
  credentialsTimeoutMs?: number;
  /** Same-speaker thresholds that override the manifest's, by model name, for models without a calibration. */
  thresholds?: Record<string, number>;
  /** What 1:N searches aim at (registry design size, FPIR per search); each unset one keeps its default. */
  searchTargets?: { [K in keyof SearchTargets]?: SearchTargets[K] | undefined };
  limits?: Partial<PipelineLimits>;
}

export interface EnrollmentResult extends TaggedEmbedding {
  speechSeconds: number;
  /** All files together, for the enroll response; each file's own is in `files`. */
  quality: AudioQuality;
  files: EmbedFileResult[];
}

/** The conditions decided 1:1, at a verify point (enrollments meet only in the 1:N conflict search). */
export type VerifyCondition = Extract<TrialCondition, 'sample_vs_sample' | 'sample_vs_enrolled'>;

/** One side of a 1:1 trial: an embedding and the speech seconds behind it. */
export type TrialSide = TaggedEmbedding & { speechSeconds: number };

/** A 1:1 decision and the figures it was made with. */
export interface Judgement {
  /** Cosine of the two embeddings, in [-1, 1]. */
  similarity: number;
  /** The cosine after AS-norm against the model's cohort where the condition decides on it (its calibration's `score`), else null. */
  normalizedScore: number | null;
  /** The condition's 1:1 point, on the score the decision is made on. */
  threshold: number;
  isSameSpeaker: boolean;
  /** The calibrated LLR and probability, or null for a model without a calibration. */
  calibrated: TrialScore | null;
}

export interface VoiceprintEngine {
  /** The manifest entry being run, and the ONNX runtime the threads use. */
  readonly model: ModelEntry;
  readonly backend: BackendName;
  /** Files being processed and files waiting, for health checks. */
  load(): { running: number; queued: number };
  /** `readWatermark`: also read the audio watermark, from the same decoded audio (EmbedFileResult.watermark). */
  embedFile(bytes: Uint8Array, options?: { readWatermark?: boolean }): Promise<EmbedFileResult>;
  /**
   * A file's Content Credentials (readCredentials: the structural scan, then c2pa-rs), read in a pool
   * thread like every other parse of an uploaded file; `trustAnchors` as readCredentials takes them.
   * Refused with the scan's problem, or 422 `malformed_manifest` when unreadable or over its deadline.
   */
  readCredentials(bytes: Uint8Array, mime: string, trustAnchors: string): Promise<FileCredentials | null>;
  /** The audio watermark alone, read in a pool thread from the decoded file (the decoder's problems for bad audio). */
  readWatermark(bytes: Uint8Array): Promise<WatermarkDetection>;
  /**
   * One enrollment from several files; needs `enrollMinSpeechSeconds` of speech in total. A file's
   * problem names it by `names[i]` (the upload's filename) and its position.
   */
  embedMany(files: readonly Uint8Array[], names?: readonly string[], options?: { minSpeechSeconds?: number }): Promise<EnrollmentResult>;
  cosine(a: TaggedEmbedding, b: TaggedEmbedding): number;
  embeddingHash(embedding: Float32Array, model: string): string;
  /** The thresholds of a model, per trial condition and use, on the score each condition decides on (its calibration's `score`). */
  points(model: string): OperatingPoints;
  /**
   * The calibrated score of a trial decided on the cosine (the 1:N searches), or null for a model
   * without a calibration; a condition decided on normalized scores is scored by `judge` instead.
   */
  score(model: string, condition: TrialCondition, cosine: number, shorterSeconds: number): TrialScore | null;
  /** Decides a 1:1 trial at the condition's verify point, on the score its calibration names. */
  judge(condition: VerifyCondition, a: TrialSide, b: TrialSide): Judgement;
  close(): Promise<void>;
}

export const defaultPipelineLimits: PipelineLimits = {
  maxBytes: limits.audioMaxBytes,
  maxSeconds: limits.audioMaxSeconds,
  minSeconds: 0.5,
  minSpeechSeconds: 1,
};

export async function createVoiceprintEngine(options: VoiceprintEngineOptions = {}): Promise<VoiceprintEngine> {
  const manifestPath = options.manifestPath ?? bundledManifestPath;
  const manifest = readManifest(manifestPath);
  const locations = { manifestDir: path.dirname(manifestPath), modelsDir: options.modelsDir ?? path.dirname(manifestPath) };
  const entry = selectModel(manifest, locations, options.model);
  const modelBytes = readVerifiedModel(entry, modelPath(entry, locations));
  checkModelMetadata(entry, modelBytes);
  const pipelineLimits = { ...defaultPipelineLimits, ...options.limits };
  const setup: WorkerSetup = { backend: options.backend ?? 'auto', entry, modelBytes, limits: pipelineLimits };
  const pool = new WorkerPool({
    size: options.threads ?? Math.max(1, Math.min(2, os.availableParallelism() - 1)),
    maxQueue: options.maxQueue ?? 16,
    taskTimeoutMs: options.taskTimeoutMs ?? 120_000,
    credentialsTimeoutMs: options.credentialsTimeoutMs,
    retryAfterSeconds: 5,
    spawn: () => startWorker(import.meta.url, 'worker', { workerData: setup }),
  });
  try {
    await pool.start();
  } catch (error) {
    await pool.close();
    throw error;
  }
  const targets: SearchTargets = { ...defaultSearchTargets };
  for (const [name, value] of Object.entries(options.searchTargets ?? {})) {
    if (value !== undefined) targets[name as keyof SearchTargets] = value;
  }
  const models = new Map(manifest.models.map((model) => [model.name, model]));
  const points = new Map(
    manifest.models.map((model) => [
      model.name,
      model.calibration && options.thresholds?.[model.name] === undefined
        ? operatingPoints(model.calibration, targets)
        : uncalibratedPoints(options.thresholds?.[model.name] ?? model.threshold),
    ]),
  );
  // A condition calibrated on normalized scores needs its model's cohort: a manifest without it is refused at start.
  const cohorts = new Map<string, Cohort>();
  for (const model of manifest.models) {
    const normalizes = TRIAL_CONDITIONS.some((condition) => model.calibration && scoreOf(model.calibration[condition]) === 'as_norm');
    const cohort = model.source === 'bundled' ? readVerifiedCohort(model, locations.manifestDir) : null;
    if (cohort) cohorts.set(model.name, cohort);
    else if (normalizes) throw new ModelIntegrityError(`model "${model.name}" decides on normalized scores but has no cohort`);
  }
  const known = <T>(map: Map<string, T>, model: string): T => {
    const value = map.get(model);
    if (value === undefined) throw new Error(`model "${model}" is not in the manifest`);
    return value;
  };
  /** The calibration a model decides with: none where VOICEPRINT_THRESHOLDS sets its point instead. */
  const calibrationOf = (model: string) => (options.thresholds?.[model] === undefined ? known(models, model).calibration : undefined);

  return {
    model: entry,
    backend: pool.backend!,
    load: () => pool.load,
    embedFile: (bytes, { readWatermark = false } = {}) => pool.run({ kind: 'embed', bytes, readWatermark }),
    readCredentials: (bytes, mime, trustAnchors) => pool.run({ kind: 'credentials', bytes, mime, trustAnchors }),
    readWatermark: (bytes) => pool.run({ kind: 'watermark', bytes }),
    async embedMany(files, names = [], { minSpeechSeconds = limits.enrollMinSpeechSeconds } = {}) {
      if (files.length === 0) throw new ProblemError('empty_audio', 'No audio file was given.');
      pool.reserve(files.length);
      const results = await Promise.all(
        files.map((bytes, index) =>
          pool.run({ kind: 'embed', bytes }).catch((error: unknown) => {
            if (error instanceof ProblemError) {
              const name = names[index] === undefined ? '' : `${JSON.stringify(names[index])} `;
              const label = `${name}(file ${index + 1} of ${files.length})`;
              throw new ProblemError(error.code, `${label}: ${error.message}`, { headers: error.headers });
            }
            throw error;
          }),
        ),
      );
      const speechSeconds = results.reduce((sum, result) => sum + result.speechSeconds, 0);
      if (speechSeconds < minSpeechSeconds) {
        throw new ProblemError(
          'too_short',
          `Enrollment needs ${minSpeechSeconds} s of speech in total; ${speechSeconds.toFixed(1)} s was detected.`,
        );
      }
      return {
        ...averageEmbeddings(results),
        speechSeconds,
        quality: combineQuality(results.map((result) => result.quality)),
        files: results,
      };
    },
    cosine,
    embeddingHash,
    points: (model) => known(points, model),
    score(model, condition, cosineValue, shorterSeconds) {
      const calibration = calibrationOf(model);
      if (calibration && scoreOf(calibration[condition]) !== 'cosine') {
        throw new Error(`${model} decides ${condition} on normalized scores: score it with judge, not from a cosine`);
      }
      return trialScore(calibration, condition, cosineValue, shorterSeconds);
    },
    judge(condition, a, b) {
      const similarity = cosine(a, b);
      const calibration = calibrationOf(a.model);
      const cohort = calibration && scoreOf(calibration[condition]) === 'as_norm' ? cohorts.get(a.model) : undefined;
      const normalized = cohort ? normalizedScore(similarity, cohortStats(cohort, a.embedding), cohortStats(cohort, b.embedding)) : null;
      const score = normalized ?? similarity;
      const threshold = known(points, a.model)[condition].verify;
      return {
        similarity,
        normalizedScore: normalized,
        threshold,
        isSameSpeaker: score >= threshold,
        calibrated: trialScore(calibration, condition, score, Math.min(a.speechSeconds, b.speechSeconds)),
      };
    },
    close: () => pool.close(),
  };
}
