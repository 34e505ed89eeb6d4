import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-web';
import { beforeAll, describe, expect, it } from 'vitest';

const MODELS = dirname(fileURLToPath(import.meta.url));

interface Entry {
  name: string;
  file: string;
  sha256: string;
  bytes: number;
  dim: number;
  input: { name: string };
  output: { name: string };
  cohort?: { file: string; sha256: string; bytes: number; rows: number; speakers: number; top_k: number };
}

const manifest = JSON.parse(readFileSync(join(MODELS, 'manifest.json'), 'utf8')) as { models: Array<Entry & { source: string }> };
/** Every model shipped in the repository: the one the service runs (the first) and the earlier ones kept for upgrades. */
const bundled = manifest.models.filter((m) => m.source === 'bundled');

function randomFeats(batch: number, frames: number, seed: number): ort.Tensor {
  let state = seed;
  const data = Float32Array.from({ length: batch * frames * 80 }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 4294967296 - 0.5) * 6; // roughly the spread of mean-normalised log-mel values
  });
  return new ort.Tensor('float32', data, [batch, frames, 80]);
}

function rows(output: ort.Tensor): number[][] {
  const [batch = 0, dim = 0] = output.dims;
  const data = output.data as Float32Array;
  return Array.from({ length: batch }, (_, b) => Array.from(data.subarray(b * dim, (b + 1) * dim)));
}

async function embed(session: ort.InferenceSession, entry: Entry, feats: ort.Tensor): Promise<ort.Tensor> {
  const output = (await session.run({ [entry.input.name]: feats }))[entry.output.name];
  if (!output) throw new Error(`model has no output named ${entry.output.name}`);
  return output;
}

it('ships at least one model', () => {
  expect(bundled.length).toBeGreaterThan(0);
});

describe.each(bundled)('bundled speaker model $name', (entry) => {
  const modelBytes = readFileSync(join(MODELS, entry.file));
  let session: ort.InferenceSession;

  beforeAll(async () => {
    ort.env.wasm.numThreads = 1;
    session = await ort.InferenceSession.create(modelBytes);
  });

  it('is the exact file the manifest describes (sha256 and byte size)', () => {
    expect(modelBytes.length).toBe(entry.bytes);
    expect(createHash('sha256').update(modelBytes).digest('hex')).toBe(entry.sha256);
  });

  it('exposes the input and output names the manifest declares', () => {
    expect(session.inputNames).toEqual([entry.input.name]);
    expect(session.outputNames).toEqual([entry.output.name]);
  });

  it('maps a [2, 300, 80] batch to [2, dim] unit-norm embeddings', async () => {
    const embedding = await embed(session, entry, randomFeats(2, 300, 1));
    expect(embedding.dims).toEqual([2, entry.dim]);
    for (const row of rows(embedding)) {
      const norm = Math.sqrt(row.reduce((sum, x) => sum + x * x, 0));
      expect(Math.abs(norm - 1)).toBeLessThan(1e-4);
    }
  });

  it('gives different embeddings for different inputs', async () => {
    const [a = []] = rows(await embed(session, entry, randomFeats(1, 300, 1)));
    const [b = []] = rows(await embed(session, entry, randomFeats(1, 300, 2)));
    const maxDiff = Math.max(...a.map((x, i) => Math.abs(x - (b[i] ?? 0))));
    expect(maxDiff).toBeGreaterThan(1e-3);
  });
});

describe.each(bundled.filter((entry) => entry.cohort))('the score-normalization cohort of $name', (entry) => {
  const cohort = entry.cohort!;
  const bytes = readFileSync(join(MODELS, cohort.file));

  it('is the exact file the manifest describes: its sha256, and rows × dim little-endian float32', () => {
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(cohort.sha256);
    expect(bytes.length).toBe(cohort.bytes);
    expect(bytes.length).toBe(cohort.rows * entry.dim * 4);
  });

  it('holds unit rows of distinct recordings, more of them than top-K', () => {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const seen = new Set<string>();
    for (let row = 0; row < cohort.rows; row++) {
      let norm = 0;
      for (let i = 0; i < entry.dim; i++) norm += view.getFloat32((row * entry.dim + i) * 4, true) ** 2;
      expect(Math.abs(Math.sqrt(norm) - 1)).toBeLessThan(1e-4);
      seen.add(bytes.subarray(row * entry.dim * 4, (row + 1) * entry.dim * 4).toString('base64'));
    }
    expect(seen.size).toBe(cohort.rows);
    expect(cohort.rows).toBeGreaterThan(cohort.top_k);
    expect(cohort.speakers).toBeLessThanOrEqual(cohort.rows);
  });
});
