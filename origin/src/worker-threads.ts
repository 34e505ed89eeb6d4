import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a thread on the module `name` beside `callerUrl` (the caller's import.meta.url). From
 * TypeScript sources (tsx, vitest) the thread loads it through a small tsx loader; a JavaScript
 * build runs the .js file directly.
 */
export function startWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), options);
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  return new Worker(new URL('./worker-from-source.mjs', import.meta.url), { ...options, argv: [entry] });
}
