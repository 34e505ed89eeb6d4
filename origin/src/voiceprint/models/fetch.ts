/**
 * `npm run model:fetch [-- --models-dir DIR] [--model NAME]`: downloads the manifest's fetched
 * models (the production CAM++ model) into the models directory, on a machine with internet.
 * A download is written beside its target and only renamed into place once its size and sha256
 * match the manifest, so the engine never sees a partial or substituted file.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { bundledManifestPath, type ModelEntry, ModelIntegrityError, readManifest, readVerifiedModel } from '../manifest.js';

export type FetchFunction = (url: string) => Promise<Response>;

export async function fetchModel(
  entry: ModelEntry,
  modelsDir: string,
  fetchImpl: FetchFunction = fetch,
): Promise<'present' | 'downloaded'> {
  if (!entry.url) throw new Error(`model "${entry.name}" has no url in the manifest`);
  const target = path.join(modelsDir, entry.file);
  if (existsSync(target)) {
    readVerifiedModel(entry, target);
    return 'present';
  }
  mkdirSync(modelsDir, { recursive: true });
  const partial = `${target}.part`;
  const response = await fetchImpl(entry.url).catch((error: Error) => {
    throw new Error(`GET ${entry.url} failed: ${error.message}${error.cause ? ` (${String(error.cause)})` : ''}`);
  });
  if (!response.ok || !response.body) throw new Error(`GET ${entry.url} answered ${response.status}`);
  const hash = createHash('sha256');
  let bytes = 0;
  const file = createWriteStream(partial);
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      if (bytes > entry.bytes) throw new ModelIntegrityError(`model "${entry.name}": the download is larger than ${entry.bytes} bytes`);
      hash.update(chunk);
      if (!file.write(chunk)) await new Promise<void>((resolve) => file.once('drain', () => resolve()));
    }
    await new Promise<void>((resolve, reject) => file.end((error?: Error | null) => (error ? reject(error) : resolve())));
    const sha256 = hash.digest('hex');
    if (bytes !== entry.bytes || sha256 !== entry.sha256) {
      throw new ModelIntegrityError(
        `model "${entry.name}": downloaded ${bytes} bytes with sha256 ${sha256}; expected ${entry.bytes} bytes, ${entry.sha256}`,
      );
    }
    renameSync(partial, target);
    return 'downloaded';
  } catch (error) {
    file.destroy();
    rmSync(partial, { force: true });
    throw error;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'models-dir': { type: 'string' }, model: { type: 'string' }, manifest: { type: 'string' } } });
  const modelsDir = values['models-dir'] ?? path.join(process.env.DATA_DIR ?? '.data', 'models');
  const manifest = readManifest(values.manifest ?? bundledManifestPath);
  const entries = manifest.models.filter((entry) => entry.source === 'fetch' && (!values.model || entry.name === values.model));
  if (entries.length === 0)
    throw new Error(values.model ? `no fetched model named "${values.model}"` : 'the manifest lists no model to fetch');
  for (const entry of entries) {
    const outcome = await fetchModel(entry, modelsDir);
    console.log(`${entry.name}: ${outcome} at ${path.join(modelsDir, entry.file)} (sha256 ${entry.sha256})`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
