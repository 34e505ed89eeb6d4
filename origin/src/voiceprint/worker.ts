import { parentPort, workerData } from 'node:worker_threads';
import { ProblemError } from '@vip/shared-schema/problem';
import { loadBackend } from './onnx-runtime.js';
import { VoiceprintPipeline } from './pipeline.js';
import type { PoolMessage, WorkerMessage, WorkerSetup } from './worker-protocol.js';

/** One pool thread: builds its own pipeline, then embeds the files the pool sends, one at a time. */
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
    const { id, bytes } = message;
    const beforeInference = () =>
      new Promise<void>((resolve) => {
        waitingToProceed.set(id, resolve);
        post({ type: 'inference', id });
      });
    try {
      const result = await pipeline.embedFile(bytes, { beforeInference });
      post({ type: 'result', id, result }, [result.embedding.buffer as ArrayBuffer]);
    } catch (error) {
      if (error instanceof ProblemError) post({ type: 'failed', id, code: error.code, message: error.message });
      else post({ type: 'failed', id, code: 'internal_error', message: error instanceof Error ? error.message : String(error) });
    }
  });
}

void main(workerData as WorkerSetup);
