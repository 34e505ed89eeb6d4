import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campplusStandInFile, fileFacts, productionCampplusEntry, standInDir } from '../../testing/stand-ins.js';
import { TempDir } from '../../testing/temp-dir.js';
import { type ModelEntry, ModelIntegrityError } from '../manifest.js';
import { fetchModel } from './fetch.js';

describe('model:fetch', () => {
  const tmp = new TempDir();
  let server: Server;
  let url: string;
  const body = () => readFileSync(path.join(standInDir(), campplusStandInFile));

  beforeAll(async () => {
    server = createServer((_request, response) => response.end(body()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/model.onnx`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    tmp.remove();
  });

  const entryFor = (facts: { sha256: string; bytes: number }): ModelEntry => ({ ...productionCampplusEntry(), ...facts, url });

  it('downloads, verifies and installs the model, then finds it present', async () => {
    const modelsDir = tmp.file('ok');
    const entry = entryFor(fileFacts(path.join(standInDir(), campplusStandInFile)));
    expect(await fetchModel(entry, modelsDir)).toBe('downloaded');
    expect(readFileSync(path.join(modelsDir, entry.file)).equals(body())).toBe(true);
    expect(await fetchModel(entry, modelsDir)).toBe('present');
  });

  it('refuses a download whose sha256 is not the manifest one and leaves nothing behind', async () => {
    const modelsDir = tmp.file('bad');
    await expect(fetchModel({ ...productionCampplusEntry(), url }, modelsDir)).rejects.toThrow(ModelIntegrityError);
    expect(existsSync(modelsDir) ? readdirSync(modelsDir) : []).toEqual([]);
  });
});
