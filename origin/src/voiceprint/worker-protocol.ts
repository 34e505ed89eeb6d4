import type { ProblemCode } from '@vip/shared-schema/problem';
import type { FileCredentials } from '@vip/shared-schema/provenance/credentials';
import type { WatermarkDetection } from '@vip/shared-schema/watermark/index';
import type { ModelEntry } from './manifest.js';
import type { BackendChoice, BackendName } from './onnx-runtime.js';
import type { EmbedFileResult, PipelineLimits } from './pipeline.js';

/** What the pool hands each worker thread at start-up. */
export interface WorkerSetup {
  backend: BackendChoice;
  entry: ModelEntry;
  /** Already checked against the manifest's sha256 by the engine. */
  modelBytes: Uint8Array;
  limits: PipelineLimits;
}

/**
 * An uploaded file for a pool thread: its voiceprint (decode, VAD, ONNX), its Content Credentials
 * (the structural scan, then c2pa-rs), or its audio watermark (decode, detection). Every parse of an untrusted file runs here, off
 * the event loop, under the pool's deadline.
 */
export type FileJob =
  /** `readWatermark`: also read the audio watermark from the decoded audio (provenance verify). */
  | { kind: 'embed'; bytes: Uint8Array; readWatermark?: boolean }
  /** `trustAnchors`: PEM certificates, as readCredentials takes them (empty: none). */
  | { kind: 'credentials'; bytes: Uint8Array; mime: string; trustAnchors: string }
  /** The audio watermark alone (the soft-binding lookup by content): decoding and detection, no model. */
  | { kind: 'watermark'; bytes: Uint8Array };

export interface FileJobResults {
  embed: EmbedFileResult;
  credentials: FileCredentials | null;
  watermark: WatermarkDetection;
}

/** From the pool to a thread. `proceed` lets a decoded file into ONNX inference (see 'inference'). */
export type PoolMessage = { type: 'run'; id: number; job: FileJob } | { type: 'proceed'; id: number };

export type WorkerMessage =
  | { type: 'ready'; backend: BackendName }
  /**
   * Decoding is over; the thread waits for 'proceed' before its first ONNX call, so the pool knows
   * for certain when terminating it is no longer safe (onnxruntime-node aborts the process then).
   */
  | { type: 'inference'; id: number }
  | { type: 'setup-failed'; message: string }
  | { type: 'result'; id: number; result: FileJobResults[FileJob['kind']] }
  | { type: 'failed'; id: number; code: ProblemCode; message: string };
