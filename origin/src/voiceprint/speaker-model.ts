import type { InferenceSession } from 'onnxruntime-web';
import { FbankExtractor, type Features } from './fbank.js';
import type { ModelEntry } from './manifest.js';
import { readOnnxMetadata } from './onnx-metadata.js';
import type { OrtBackend } from './onnx-runtime.js';

export class ModelContractError extends Error {
  override name = 'ModelContractError';
}

/** An ONNX speaker model with the front-end its manifest entry prescribes. */
export class SpeakerModel {
  readonly frontend: FbankExtractor;

  private constructor(
    readonly entry: ModelEntry,
    private readonly backend: OrtBackend,
    private readonly session: InferenceSession,
  ) {
    const f = entry.frontend;
    this.frontend = new FbankExtractor({
      sampleRate: f.sample_rate,
      numMelBins: f.num_mel_bins,
      frameLengthMs: f.frame_length_ms,
      frameShiftMs: f.frame_shift_ms,
      preemphasis: f.preemphasis,
      removeDcOffset: f.remove_dc_offset,
      snipEdges: f.snip_edges,
      windowType: f.window_type,
      waveformScale: f.waveform_scale,
      cmn: f.cmn,
    });
  }

  /** `bytes` must already be verified against the manifest's sha256. */
  static async load(entry: ModelEntry, bytes: Uint8Array, backend: OrtBackend): Promise<SpeakerModel> {
    checkModelMetadata(entry, bytes);
    const session = await backend.ort.InferenceSession.create(bytes, backend.sessionOptions);
    if (!session.inputNames.includes(entry.input.name) || !session.outputNames.includes(entry.output.name)) {
      await session.release();
      throw new ModelContractError(
        `model "${entry.name}" has inputs [${session.inputNames}] and outputs [${session.outputNames}]; the manifest names ${entry.input.name} -> ${entry.output.name}`,
      );
    }
    const model = new SpeakerModel(entry, backend, session);
    await model.checkOutputDimension();
    return model;
  }

  /** Speaker embedding of 16 kHz mono speech, L2-normalised. */
  async embed(speech: Float32Array): Promise<Float32Array> {
    return this.embedFeatures(this.frontend.compute(speech));
  }

  async embedFeatures(features: Features): Promise<Float32Array> {
    const input = new this.backend.ort.Tensor('float32', features.data, [1, features.frames, features.bins]);
    const outputs = await this.session.run({ [this.entry.input.name]: input });
    const embedding = Float32Array.from(outputs[this.entry.output.name]!.data as Float32Array);
    return l2Normalize(embedding);
  }

  async release(): Promise<void> {
    await this.session.release();
  }

  /** One short dummy run: the output size is only known for sure by running the graph. */
  private async checkOutputDimension(): Promise<void> {
    const frames = 200;
    const bins = this.entry.frontend.num_mel_bins;
    const output = await this.embedFeatures({ data: new Float32Array(frames * bins), frames, bins });
    if (output.length !== this.entry.dim) {
      await this.release();
      throw new ModelContractError(`model "${this.entry.name}" gives ${output.length}-dim embeddings; the manifest says ${this.entry.dim}`);
    }
  }
}

/** Refuses a graph whose ONNX metadata_props contradict the manifest entry's `metadata`. */
export function checkModelMetadata(entry: ModelEntry, bytes: Uint8Array): void {
  const actual = readOnnxMetadata(bytes);
  for (const [key, expected] of Object.entries(entry.metadata ?? {})) {
    if (actual[key] !== expected) {
      throw new ModelContractError(
        `model "${entry.name}": ONNX metadata ${key} is ${JSON.stringify(actual[key])}, expected ${JSON.stringify(expected)}`,
      );
    }
  }
}

function l2Normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (!(norm > 0) || !Number.isFinite(norm)) throw new ModelContractError('the model returned a zero or non-finite embedding');
  for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}
