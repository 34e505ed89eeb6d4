import type * as OrtWeb from 'onnxruntime-web';

/** onnxruntime-web and onnxruntime-node share onnxruntime-common's API; this is that shape. */
export type Ort = typeof OrtWeb;
export type BackendName = 'web' | 'node';
export type BackendChoice = BackendName | 'auto';

export interface OrtBackend {
  name: BackendName;
  ort: Ort;
  sessionOptions: OrtWeb.InferenceSession.SessionOptions;
}

/**
 * Loads the ONNX runtime. Each pool worker runs one single-threaded session: parallelism comes from
 * the pool, so ORT's own thread pools stay at one thread and never compete with the event loop.
 * 'auto' takes onnxruntime-node (an optional dependency, ~5x faster on conv nets) when it is installed.
 */
export async function loadBackend(choice: BackendChoice): Promise<OrtBackend> {
  if (choice !== 'web') {
    try {
      const ort = (await import('onnxruntime-node')) as unknown as Ort;
      // Without the arena a 5-minute file leaves ~140 MB behind instead of ~670 MB, for ~20% more time.
      const sessionOptions = { executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, enableCpuMemArena: false };
      return { name: 'node', ort, sessionOptions };
    } catch (error) {
      if (choice === 'node') throw new Error(`onnxruntime-node is not installed or does not load: ${String(error)}`);
    }
  }
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  return { name: 'web', ort: ort as Ort, sessionOptions: { executionProviders: ['wasm'] } };
}
