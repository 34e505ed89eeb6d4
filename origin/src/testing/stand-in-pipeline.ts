import { readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultPipelineLimits } from '../voiceprint/engine.js';
import { type BackendName, loadBackend } from '../voiceprint/onnx-runtime.js';
import { VoiceprintPipeline } from '../voiceprint/pipeline.js';
import { standInDir, vipStandInEntry, vipStandInFile } from './stand-ins.js';

/** The whole per-file pipeline on the test's own thread, with the bundled-contract stand-in model. */
export async function standInPipeline(backend: BackendName = 'web'): Promise<VoiceprintPipeline> {
  const dir = standInDir();
  return VoiceprintPipeline.create({
    backend: await loadBackend(backend),
    entry: vipStandInEntry(dir),
    modelBytes: new Uint8Array(readFileSync(path.join(dir, vipStandInFile))),
    limits: defaultPipelineLimits,
  });
}
