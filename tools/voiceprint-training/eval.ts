/**
 * Scores the shipped ONNX speaker model on dev through onnxruntime-node, next to the non-neural
 * baseline (per-utterance fbank mean and std, cosine), and writes models/<model>.eval.json.
 *
 *   /usr/bin/python3 tools/voiceprint-training/prep.py     # once: dev fbank cache
 *   npx tsx tools/voiceprint-training/eval.ts [--model NAME]   # default: the engine's own choice (manifest.ts selectModel)
 *
 * The operating points the service decides with are set by evaluate.ts, through the service's own
 * pipeline; this script checks the export and compares with the baseline.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';
import { mulberry32 } from '../../origin/src/testing/random.js';
import {
  bundledManifestPath,
  bundledModelLocations,
  type ModelEntry,
  modelPath,
  readManifest,
  readVerifiedModel,
  selectModel,
} from '../../origin/src/voiceprint/manifest.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const WORK = join(HERE, 'work');
const MODEL_OPTION = parseArgs({ options: { model: { type: 'string' } } }).values.model;
const MEL = 80;
const DIFF_PAIRS = 200_000; // sampled different-speaker pairs per subset, when there are more
const SEED = 20261122;

interface Utterance {
  path: string;
  set: string;
  speaker: string;
  offset: number;
  frames: number;
}

/** xs[i], or a RangeError: every index used here comes from the same data it reads. */
function at<T>(xs: ArrayLike<T>, i: number): T {
  const x = xs[i];
  if (x === undefined) throw new RangeError(`index ${i} out of range`);
  return x;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    const y = at(b, i);
    dot += x * y;
    na += x * x;
    nb += y * y;
  });
  return dot / Math.sqrt(na * nb);
}

/** All same-speaker pairs of the chosen utterances, and all or a seeded sample of the rest. */
function makePairs(speakers: string[], members: number[]): { same: [number, number][]; diff: [number, number][] } {
  const same: [number, number][] = [];
  const diff: [number, number][] = [];
  members.forEach((i, x) => {
    for (const j of members.slice(x + 1)) (at(speakers, i) === at(speakers, j) ? same : diff).push([i, j]);
  });
  if (diff.length <= DIFF_PAIRS) return { same, diff };
  const rand = mulberry32(SEED);
  const seen = new Set<number>();
  const sampled: [number, number][] = [];
  while (sampled.length < DIFF_PAIRS) {
    const i = at(members, Math.floor(rand() * members.length));
    const j = at(members, Math.floor(rand() * members.length));
    const key = Math.min(i, j) * speakers.length + Math.max(i, j);
    if (at(speakers, i) === at(speakers, j) || seen.has(key)) continue;
    seen.add(key);
    sampled.push([i, j]);
  }
  return { same, diff: sampled };
}

interface Operating {
  threshold: number;
  far: number;
  frr: number;
}

/** Rates (%) when accepting scores >= threshold. */
function ratesAt(same: Float64Array, diff: Float64Array, threshold: number): Operating {
  let fa = 0;
  for (const s of diff) if (s >= threshold) fa++;
  let fr = 0;
  for (const s of same) if (s < threshold) fr++;
  return { threshold, far: round((100 * fa) / diff.length, 3), frr: round((100 * fr) / same.length, 3) };
}

/** EER (%) and its threshold, by sweeping the threshold over every observed score. */
function equalErrorRate(same: Float64Array, diff: Float64Array): { eer: number } & Operating {
  const scored: [number, boolean][] = [
    ...Array.from(same, (s): [number, boolean] => [s, true]),
    ...Array.from(diff, (s): [number, boolean] => [s, false]),
  ].sort((p, q) => q[0] - p[0]);
  let accepted = 0;
  let falseAccepts = 0;
  let best = { gap: Infinity, eer: 100, threshold: 1, far: 0, frr: 100 };
  for (const [score, isSame] of scored) {
    accepted++;
    if (!isSame) falseAccepts++;
    const far = (100 * falseAccepts) / diff.length;
    const frr = (100 * (same.length - (accepted - falseAccepts))) / same.length;
    if (Math.abs(far - frr) < best.gap) best = { gap: Math.abs(far - frr), eer: (far + frr) / 2, threshold: score, far, frr };
  }
  return { eer: best.eer, threshold: best.threshold, far: best.far, frr: best.frr };
}

/** Lowest threshold whose FAR is at most the target (%). */
function thresholdForFar(diff: Float64Array, targetFar: number): number {
  const sorted = Float64Array.from(diff).sort().reverse();
  const allowed = Math.floor((targetFar / 100) * sorted.length);
  return allowed < sorted.length ? at(sorted, allowed) + 1e-9 : at(sorted, sorted.length - 1);
}

async function run(session: ort.InferenceSession, entry: ModelEntry, feats: ort.Tensor): Promise<ort.Tensor> {
  const output = (await session.run({ [entry.input.name]: feats }))[entry.output.name];
  if (!output) throw new Error(`model has no output named ${entry.output.name}`);
  return output;
}

async function embedAll(session: ort.InferenceSession, entry: ModelEntry, feats: Float32Array, utts: Utterance[]) {
  const out: Float32Array[] = [];
  for (const u of utts) {
    const data = feats.subarray(u.offset * MEL, (u.offset + u.frames) * MEL);
    const input = new ort.Tensor('float32', Float32Array.from(data), [1, u.frames, MEL]);
    const result = await run(session, entry, input);
    out.push(Float32Array.from(result.data as Float32Array));
  }
  return out;
}

/** Non-neural baseline: raw fbank mean per bin (from prep.py) and std per bin, concatenated. */
function baselineVectors(feats: Float32Array, means: Float32Array, utts: Utterance[]): Float32Array[] {
  return utts.map((u, n) => {
    const squares = new Float64Array(MEL);
    // CMN features are already zero-mean per bin, so their mean square is the variance
    feats.subarray(u.offset * MEL, (u.offset + u.frames) * MEL).forEach((x, i) => {
      squares[i % MEL] = at(squares, i % MEL) + x * x;
    });
    const v = new Float32Array(2 * MEL);
    v.set(means.subarray(n * MEL, (n + 1) * MEL), 0);
    v.set(
      Array.from(squares, (sq) => Math.sqrt(sq / u.frames)),
      MEL,
    );
    return v;
  });
}

function score(vectors: Float32Array[], pairs: [number, number][]): Float64Array {
  return Float64Array.from(pairs, ([i, j]) => cosine(at(vectors, i), at(vectors, j)));
}

function round(x: number, digits = 2): number {
  return Number(x.toFixed(digits));
}

async function main() {
  const entry = selectModel(readManifest(bundledManifestPath), bundledModelLocations, MODEL_OPTION);
  const modelName = entry.name;
  const modelBytes = readVerifiedModel(entry, modelPath(entry, bundledModelLocations));

  const index = JSON.parse(readFileSync(join(WORK, 'dev_feats.json'), 'utf8')) as { utterances: Utterance[] };
  const utts = index.utterances;
  const featBuf = readFileSync(join(WORK, 'dev_feats.f32'));
  const feats = new Float32Array(featBuf.buffer, featBuf.byteOffset, featBuf.byteLength / 4);
  const meanBuf = readFileSync(join(WORK, 'dev_means.f32'));
  const means = new Float32Array(meanBuf.buffer, meanBuf.byteOffset, meanBuf.byteLength / 4);

  const session = await ort.InferenceSession.create(modelBytes, { intraOpNumThreads: 2 });

  // The ONNX graph must reproduce torch's output on the input export.py saved; a file exported on
  // another machine (the GPU runs) was checked there, and has no such input here.
  const checkFile = join(WORK, 'onnx_check.json');
  let onnxVsTorch: number | null = null;
  if (existsSync(checkFile)) {
    const check = JSON.parse(readFileSync(checkFile, 'utf8')) as { shape: number[]; input: number[]; embedding: number[] };
    const checkOut = await run(session, entry, new ort.Tensor('float32', Float32Array.from(check.input), check.shape));
    const got = checkOut.data as Float32Array;
    onnxVsTorch = Math.max(...check.embedding.map((v, i) => Math.abs(v - at(got, i))));
  }

  const started = Date.now();
  const model = await embedAll(session, entry, feats, utts);
  const embedSeconds = (Date.now() - started) / 1000;
  const baseline = baselineVectors(feats, means, utts);

  const speakers = utts.map((u) => u.speaker);
  const subsets = new Map<string, number[]>([
    ['so762', []],
    ['fsdd', []],
    ['all', []],
  ]);
  utts.forEach((u, i) => {
    subsets.get(u.set)?.push(i);
    subsets.get('all')?.push(i);
  });
  const members = (name: string): number[] => subsets.get(name) ?? [];

  const results: Record<string, unknown> = {};
  const rows: string[] = [];
  let threshold = 0;
  for (const name of ['so762', 'fsdd', 'all']) {
    const pairs = makePairs(speakers, members(name));
    const m = equalErrorRate(score(model, pairs.same), score(model, pairs.diff));
    const b = equalErrorRate(score(baseline, pairs.same), score(baseline, pairs.diff));
    results[name] = {
      utterances: members(name).length,
      speakers: new Set(members(name).map((i) => at(speakers, i))).size,
      same_pairs: pairs.same.length,
      diff_pairs: pairs.diff.length,
      model_eer: round(m.eer),
      model_eer_threshold: round(m.threshold, 4),
      baseline_eer: round(b.eer),
    };
    rows.push(
      `${name.padEnd(6)} ${String(pairs.same.length).padStart(7)} ${String(pairs.diff.length).padStart(7)} ${m.eer.toFixed(2).padStart(8)}% ${b.eer.toFixed(2).padStart(10)}%`,
    );
    if (name === 'all') threshold = round(m.threshold, 4);
  }
  // Operating points on the whole dev set: the EER threshold (shipped) and a 1% FAR point.
  const all = makePairs(speakers, members('all'));
  const same = score(model, all.same);
  const diff = score(model, all.diff);
  const lowFar = ratesAt(same, diff, round(thresholdForFar(diff, 1), 4));
  const operating = { eer_point: ratesAt(same, diff, threshold), far_1pct: lowFar };
  const perSubsetAtThreshold: Record<string, Operating> = {};
  for (const name of ['so762', 'fsdd']) {
    const p = makePairs(speakers, members(name));
    perSubsetAtThreshold[name] = ratesAt(score(model, p.same), score(model, p.diff), threshold);
  }

  console.log(
    `${modelName}: ${utts.length} dev utterances embedded in ${embedSeconds.toFixed(1)} s; ONNX vs torch max |diff| ${onnxVsTorch === null ? 'not checked here (no work/onnx_check.json)' : onnxVsTorch.toExponential(2)}`,
  );
  console.log('subset    same    diff  model EER  baseline EER');
  for (const row of rows) console.log(row);
  for (const [name, op] of Object.entries(operating)) {
    console.log(`${name}: threshold ${op.threshold.toFixed(4)}  FAR ${op.far.toFixed(2)}%  FRR ${op.frr.toFixed(2)}%`);
  }

  const report = {
    model: modelName,
    file: entry.file,
    sha256: entry.sha256,
    runtime: `onnxruntime-node ${ort.env.versions?.common ?? ''}`.trim(),
    onnx_vs_torch_max_abs_diff: onnxVsTorch,
    pairs: `all same-speaker pairs; different-speaker pairs exhaustive up to ${DIFF_PAIRS}, else ${DIFF_PAIRS} sampled (seed ${SEED})`,
    baseline: 'cosine of [per-bin mean, per-bin std] of the raw 80-bin fbank',
    subsets: results,
    threshold: {
      value: threshold,
      rule: 'cosine at the equal-error point of the whole dev set (accept if score >= threshold)',
      all: operating.eer_point,
      ...perSubsetAtThreshold,
    },
    low_far_point: operating.far_1pct,
  };
  writeFileSync(join(bundledModelLocations.manifestDir, `${modelName}.eval.json`), `${JSON.stringify(report, null, 2)}\n`);
}

await main();
