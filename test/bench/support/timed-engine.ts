import type { VoiceprintEngine } from '../../../origin/src/voiceprint/index.js';

/** An engine whose file embeddings time themselves into `embedMs`, so a call's speaker model can be taken apart from the rest of it. */
export function timedEngine(engine: VoiceprintEngine, embedMs: number[]): VoiceprintEngine {
  return {
    ...engine,
    model: engine.model,
    backend: engine.backend,
    embedFile: async (bytes) => {
      const started = performance.now();
      try {
        return await engine.embedFile(bytes);
      } finally {
        embedMs.push(performance.now() - started);
      }
    },
  };
}
