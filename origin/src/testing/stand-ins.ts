import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundledManifestPath, type Manifest, type ModelEntry, readManifest } from '../voiceprint/manifest.js';

export const campplusStandInFile = 'campplus-stand-in.onnx';
export const vipStandInFile = 'vip-speaker-stand-in.onnx';

/**
 * The committed stand-in ONNX graphs (a few hundred KB), so tests need no Python. They were written
 * by `/usr/bin/python3 tools/stand-in-models/make-stand-ins.py origin/src/testing/stand-ins`;
 * run it again after changing that script.
 */
export function standInDir(): string {
  return path.join(path.dirname(fileURLToPath(import.meta.url)), 'stand-ins');
}

export function fileFacts(file: string): { sha256: string; bytes: number } {
  const bytes = readFileSync(file);
  return { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
}

/** The shipped bundled model's entry when its file is in place (the ML side may still be training it). */
export function shippedBundledModel(): ModelEntry | undefined {
  const entry = readManifest(bundledManifestPath).models.find((model) => model.source === 'bundled');
  return entry && existsSync(path.join(path.dirname(bundledManifestPath), entry.file)) ? entry : undefined;
}

export const productionCampplusEntry = (): ModelEntry => {
  const entry = readManifest(bundledManifestPath).models.find((model) => model.source === 'fetch');
  if (!entry) throw new Error('the bundled manifest has no fetched (CAM++) entry');
  return entry;
};

/** A bundled stand-in with the bundled model's contract (feats -> embedding, povey, CMN). */
export function vipStandInEntry(dir: string): ModelEntry {
  return {
    name: 'vip-speaker-stand-in',
    file: vipStandInFile,
    ...fileFacts(path.join(dir, vipStandInFile)),
    dim: 192,
    input: { name: 'feats', shape: ['batch', 'frames', 80] },
    output: { name: 'embedding', shape: ['batch', 192] },
    frontend: { ...productionCampplusEntry().frontend },
    threshold: 0.5,
    normalized_output: false,
    source: 'bundled',
    card: 'none',
  };
}

/**
 * A test models setup: `manifestDir` holds the manifest and the bundled stand-in; `modelsDir` is
 * where fetched models go. With `campplus: true` the CAM++ stand-in sits in `modelsDir` under the
 * production file name, and the manifest carries the production entry with the stand-in's hash.
 */
export function writeTestModels(
  root: string,
  options: { campplus: boolean; campplusFacts?: 'stand-in' | 'production' },
): {
  manifestPath: string;
  modelsDir: string;
  manifest: Manifest;
} {
  const dir = standInDir();
  const manifestDir = path.join(root, 'manifest');
  const modelsDir = path.join(root, 'fetched');
  mkdirSync(manifestDir, { recursive: true });
  mkdirSync(modelsDir, { recursive: true });
  copyFileSync(path.join(dir, vipStandInFile), path.join(manifestDir, vipStandInFile));
  const production = productionCampplusEntry();
  const campplus: ModelEntry =
    options.campplusFacts === 'production' ? production : { ...production, ...fileFacts(path.join(dir, campplusStandInFile)) };
  if (options.campplus) copyFileSync(path.join(dir, campplusStandInFile), path.join(modelsDir, production.file));
  const manifest: Manifest = { models: [campplus, vipStandInEntry(dir)] };
  const manifestPath = path.join(manifestDir, 'manifest.json');
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  return { manifestPath, modelsDir, manifest };
}
