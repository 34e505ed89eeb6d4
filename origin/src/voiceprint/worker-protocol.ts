import type { ProblemCode } from '@vip/shared-schema/problem';
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

/** From the pool to a thread. `proceed` lets a decoded file into ONNX inference (see 'inference'). */
export type PoolMessage = { type: 'embed'; id: number; bytes: Uint8Array } | { type: 'proceed'; id: number };

export type WorkerMessage =
  | { type: 'ready'; backend: BackendName }
  /**
   * Decoding is over; the thread waits for 'proceed' before its first ONNX call, so the pool knows
   * for certain when terminating it is no longer safe (onnxruntime-node aborts the process then).
   */
  | { type: 'inference'; id: number }
  | { type: 'setup-failed'; message: string }
  | { type: 'result'; id: number; result: EmbedFileResult }
  | { type: 'failed'; id: number; code: ProblemCode; message: string };
