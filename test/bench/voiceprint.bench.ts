import type { Bench, Figure } from './bench.js';
import { runVoiceprintBench } from './support/voiceprint-pipeline.js';

/** A stand-in model gets keys of its own, so its figures are never compared with the real model's. */
const modelKey = (model: string, standIn: boolean) => `${model.replace(/[^A-Za-z0-9]+/g, '_')}${standIn ? '_stand_in' : ''}`;

const bench: Bench = {
  title: 'Voiceprint pipeline (origin): decode, resample, VAD, fbank, speaker model',
  method: [
    'Runs `runVoiceprintBench` from `test/bench/support/voiceprint-pipeline.ts`: 10 s of speech per file, one thread, median of several runs,',
    'onnxruntime-web against onnxruntime-node in the same run. See that file for the details; models that are not present are',
    'replaced by stand-ins of the same graph shape, marked as such. Nothing here is guarded by `--quick`: the web/node ratio',
    'comes from runs one after the other, not interleaved, and moved between 0.95 and 1.28 across runs of the same code here.',
  ].join(' '),
  async run({ quick }) {
    const report = await runVoiceprintBench({ runs: quick ? 1 : 5 });
    const figures: Figure[] = report.figures.flatMap((figure) => {
      const name = `${figure.model}${figure.standIn ? ' (stand-in)' : ''}, onnxruntime-${figure.backend}`;
      const key = `voiceprint.${modelKey(figure.model, figure.standIn)}.${figure.backend}`;
      return [
        { key: `${key}.total_ms`, label: `${name}: one ${report.audio.seconds} s file`, value: figure.totalMs, unit: 'ms' },
        { key: `${key}.real_time_factor`, label: `${name}: real-time factor`, value: figure.realTimeFactor, unit: 'ratio' },
      ];
    });
    for (const [model, ratio] of Object.entries(report.webOverNode)) {
      const standIn = report.figures.some((figure) => figure.model === model && figure.standIn);
      figures.push({
        key: `voiceprint.${modelKey(model, standIn)}.web_over_node`,
        label: `${model}${standIn ? ' (stand-in)' : ''}: onnxruntime-web time / onnxruntime-node time`,
        value: ratio,
        unit: 'ratio',
      });
    }
    return { figures, notes: [`${report.runs} run(s) per model and backend on ${report.audio.format} audio.`] };
  },
};

export default bench;
