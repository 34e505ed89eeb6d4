import { parentPort, workerData } from 'node:worker_threads';
import { ProblemError } from '@vip/shared-schema/problem';
import { readCredentials } from '@vip/shared-schema/provenance/credentials';
import { loadBackend } from './onnx-runtime.js';
import { VoiceprintPipeline } from './pipeline.js';
import type { FileJob, PoolMessage, WorkerMessage, WorkerSetup } from './worker-protocol.js';

/** One pool thread: builds its own pipeline, then runs the file jobs the pool sends, one at a time. */
const port = parentPort!;
const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

async function main(setup: WorkerSetup): Promise<void> {
  let pipeline: VoiceprintPipeline;
  try {
    const backend = await loadBackend(setup.backend);
    pipeline = await VoiceprintPipeline.create({ backend, entry: setup.entry, modelBytes: setup.modelBytes, limits: setup.limits });
    post({ type: 'ready', backend: backend.name });
  } catch (error) {
    post({ type: 'setup-failed', message: error instanceof Error ? error.message : String(error) });
    return;
  }
  const waitingToProceed = new Map<number, () => void>();
  port.on('message', async (message: PoolMessage) => {
    if (message.type === 'proceed') {
      waitingToProceed.get(message.id)?.();
      waitingToProceed.delete(message.id);
      return;
    }
    const { id, job } = message;
    const beforeInference = () =>
      new Promise<void>((resolve) => {
        waitingToProceed.set(id, resolve);
        post({ type: 'inference', id });
      });
    try {
      if (job.kind === 'credentials') {
        post({ type: 'result', id, result: await credentialsOf(job) });
        return;
      }
      if (job.kind === 'watermark') {
        post({ type: 'result', id, result: await pipeline.readWatermark(job.bytes) });
        return;
      }
      const result = await pipeline.embedFile(job.bytes, { beforeInference, readWatermark: job.readWatermark });
      post({ type: 'result', id, result }, [result.embedding.buffer as ArrayBuffer]);
    } catch (error) {
      if (error instanceof ProblemError) post({ type: 'failed', id, code: error.code, message: error.message });
      else post({ type: 'failed', id, code: 'internal_error', message: error instanceof Error ? error.message : String(error) });
    }
  });
}

/** c2pa-rs's reading; a manifest it cannot parse at all (cut short, not JUMBF) is the caller's bad input. */
async function credentialsOf(job: Extract<FileJob, { kind: 'credentials' }>) {
  try {
    return await readCredentials(job.bytes, job.mime, job.trustAnchors ? { trustAnchors: job.trustAnchors } : {});
  } catch (error) {
    if (error instanceof ProblemError) throw error;
    const reason = String((error as Error)?.message ?? error).slice(0, 200);
    throw new ProblemError('malformed_manifest', `The file's Content Credentials cannot be read: ${reason}`);
  }
}

void main(workerData as WorkerSetup);
