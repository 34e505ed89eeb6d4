/**
 * Real-time factor of the whole voiceprint pipeline (decode, resample, VAD, fbank, model) on 10 s of
 * speech, one thread, onnxruntime-web against onnxruntime-node, for the bundled model and CAM++.
 * Models not present here are replaced by their stand-ins (same graph names and shapes, tiny
 * weights): the figures then show the pipeline's cost around a near-free model, and say so.
 *
 *   npx tsx test/bench/support/voiceprint-pipeline.ts [--runs 5]      (prints a table, then the JSON figures)
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { OTHER_AUDIO_FIXTURES } from '../../../origin/src/testing/audio-fixtures.js';
import { readAudioFixture } from '../../../origin/src/testing/fixtures.js';
import { campplusStandInFile, fileFacts, standInDir, vipStandInEntry, vipStandInFile } from '../../../origin/src/testing/stand-ins.js';
import { defaultPipelineLimits } from '../../../origin/src/voiceprint/engine.js';
import {
  bundledManifestPath,
  type ModelEntry,
  modelPath,
  readManifest,
  readVerifiedModel,
} from '../../../origin/src/voiceprint/manifest.js';
import { type BackendName, loadBackend } from '../../../origin/src/voiceprint/onnx-runtime.js';
import { type StageTimings, VoiceprintPipeline } from '../../../origin/src/voiceprint/pipeline.js';

const AUDIO_SECONDS = 10;

export interface BenchFigure {
  model: string;
  standIn: boolean;
  backend: BackendName;
  /** Median wall time of one file over the runs, and its share of the audio's duration. */
  totalMs: number;
  realTimeFactor: number;
  stagesMs: StageTimings;
}

export interface VoiceprintBenchReport {
  audio: { seconds: number; format: string; sampleRate: number };
  runs: number;
  figures: BenchFigure[];
  /** web time over node time, per model, measured in this same run. */
  webOverNode: Record<string, number>;
}

interface BenchModel {
  entry: ModelEntry;
  bytes: Uint8Array;
  standIn: boolean;
}

/** The shipped models where their files are present (every bundled one), else their stand-ins. */
function benchModels(modelsDir: string): BenchModel[] {
  const manifest = readManifest(bundledManifestPath);
  const manifestDir = path.dirname(bundledManifestPath);
  const present = (entry: ModelEntry) => existsSync(modelPath(entry, { manifestDir, modelsDir }));
  // Every bundled model whose file is here: a new version is measured beside the one it replaces.
  const bundled = manifest.models.filter((entry) => entry.source === 'bundled' && present(entry));
  const campplus = manifest.models.find((entry) => entry.source === 'fetch');
  if (!campplus) throw new Error('the manifest has no CAM++ entry');
  const models: BenchModel[] = [];
  let generated: string | undefined;
  const standIns = () => (generated ??= standInDir());
  for (const entry of bundled)
    models.push({ entry, bytes: readVerifiedModel(entry, modelPath(entry, { manifestDir, modelsDir })), standIn: false });
  if (bundled.length === 0)
    models.push({
      entry: vipStandInEntry(standIns()),
      bytes: new Uint8Array(readFileSync(path.join(standIns(), vipStandInFile))),
      standIn: true,
    });
  if (present(campplus)) {
    models.push({ entry: campplus, bytes: readVerifiedModel(campplus, modelPath(campplus, { manifestDir, modelsDir })), standIn: false });
  } else {
    const file = path.join(standIns(), campplusStandInFile);
    models.push({ entry: { ...campplus, ...fileFacts(file) }, bytes: new Uint8Array(readFileSync(file)), standIn: true });
  }
  return models;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function runVoiceprintBench(options: { runs?: number; modelsDir?: string } = {}): Promise<VoiceprintBenchReport> {
  const runs = options.runs ?? 5;
  // 10 s of real speech as a 48 kHz Ogg Opus upload, so decoding and resampling are both exercised.
  const audio = readAudioFixture(OTHER_AUDIO_FIXTURES.benchSpeech);
  const models = benchModels(options.modelsDir ?? path.dirname(bundledManifestPath));
  const figures: BenchFigure[] = [];
  const backends = [await loadBackend('web'), await loadBackend('node')];
  for (const model of models) {
    const pipelines = await Promise.all(
      backends.map((backend) =>
        VoiceprintPipeline.create({ backend, entry: model.entry, modelBytes: model.bytes, limits: defaultPipelineLimits }),
      ),
    );
    for (const pipeline of pipelines) await pipeline.embedFile(audio); // warm-up: wasm compilation, first-run allocations
    // Runs alternate between the backends so both see the same machine load.
    const totals = pipelines.map((): number[] => []);
    const stages = pipelines.map((): StageTimings[] => []);
    for (let run = 0; run < runs; run++) {
      for (const [i, pipeline] of pipelines.entries()) {
        const timings: StageTimings = { decodeMs: 0, vadMs: 0, embedMs: 0 };
        const started = performance.now();
        await pipeline.embedFile(audio, { timings });
        totals[i]!.push(performance.now() - started);
        stages[i]!.push(timings);
      }
    }
    for (const [i, pipeline] of pipelines.entries()) {
      await pipeline.release();
      const totalMs = median(totals[i]!);
      const stageMedian = (key: keyof StageTimings) => Math.round(median(stages[i]!.map((s) => s[key])) * 10) / 10;
      figures.push({
        model: model.entry.name,
        standIn: model.standIn,
        backend: backends[i]!.name,
        totalMs: Math.round(totalMs * 10) / 10,
        realTimeFactor: Math.round((totalMs / 1000 / AUDIO_SECONDS) * 10000) / 10000,
        stagesMs: { decodeMs: stageMedian('decodeMs'), vadMs: stageMedian('vadMs'), embedMs: stageMedian('embedMs') },
      });
    }
  }
  const webOverNode: Record<string, number> = {};
  for (const model of models) {
    const web = figures.find((f) => f.model === model.entry.name && f.backend === 'web')!;
    const node = figures.find((f) => f.model === model.entry.name && f.backend === 'node')!;
    webOverNode[model.entry.name] = Math.round((web.totalMs / node.totalMs) * 100) / 100;
  }
  return { audio: { seconds: AUDIO_SECONDS, format: 'ogg-opus', sampleRate: 48000 }, runs, figures, webOverNode };
}

function printTable(report: VoiceprintBenchReport): void {
  console.log(
    `voiceprint pipeline, ${report.audio.seconds} s of speech (${report.audio.format}, ${report.audio.sampleRate} Hz), one thread, median of ${report.runs}`,
  );
  console.log(`${'model'.padEnd(34)} backend  total ms    RTF   decode    VAD  fbank+model`);
  for (const f of report.figures) {
    const name = `${f.model}${f.standIn ? ' (stand-in)' : ''}`.padEnd(34);
    console.log(
      `${name} ${f.backend.padEnd(7)} ${f.totalMs.toFixed(1).padStart(9)} ${f.realTimeFactor.toFixed(4).padStart(6)} ${f.stagesMs.decodeMs.toFixed(1).padStart(8)} ${f.stagesMs.vadMs.toFixed(1).padStart(6)} ${f.stagesMs.embedMs.toFixed(1).padStart(12)}`,
    );
  }
  for (const [model, ratio] of Object.entries(report.webOverNode)) console.log(`${model}: web takes ${ratio}x the time of node`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, 'models-dir': { type: 'string' } } });
  runVoiceprintBench({ runs: values.runs ? Number(values.runs) : undefined, modelsDir: values['models-dir'] })
    .then((report) => {
      printTable(report);
      console.log(JSON.stringify(report, null, 2));
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
