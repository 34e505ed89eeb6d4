import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ProblemError } from '@vip/shared-schema/problem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { speechDir } from '../testing/fixtures.js';
import { shippedBundledModel, writeTestModels } from '../testing/stand-ins.js';
import { TempDir } from '../testing/temp-dir.js';
import { createVoiceprintEngine, type VoiceprintEngine } from './engine.js';
import type { TaggedEmbedding } from './similarity.js';
import { readSpeechManifest } from './speech-manifest.js';

/** The model the service runs: the manifest's first bundled one. */
const BUNDLED_MODEL = shippedBundledModel()?.name;
const SPEAKERS = ['SPEAKER0003', 'SPEAKER0024', 'SPEAKER0049', 'SPEAKER0093', 'SPEAKER0111'];
const UTTERANCES_PER_SPEAKER = 4;

/** The shipped model when its file is in place; otherwise the random stand-in, which cannot tell speakers apart. */
const realBundledModelPresent = () => BUNDLED_MODEL !== undefined;

function devUtterances(): Array<{ speaker: string; file: string }> {
  const recordings = readSpeechManifest(speechDir);
  return SPEAKERS.flatMap((speaker) =>
    recordings
      .filter((recording) => recording.speaker === `so762:${speaker}`)
      .slice(0, UTTERANCES_PER_SPEAKER)
      .map((recording) => ({ speaker, file: path.join(speechDir, recording.path) })),
  );
}

describe(`speaker discrimination on the committed speech fixtures (${realBundledModelPresent() ? BUNDLED_MODEL : 'stand-in: no bundled model file'})`, () => {
  const tmp = new TempDir();
  let engine: VoiceprintEngine;
  const embeddings: Array<TaggedEmbedding & { speaker: string }> = [];

  beforeAll(async () => {
    const models = realBundledModelPresent() ? {} : writeTestModels(tmp.path, { campplus: false });
    engine = await createVoiceprintEngine({
      ...models,
      model: realBundledModelPresent() ? BUNDLED_MODEL : undefined,
      threads: 2,
      maxQueue: 32,
    });
    const utterances = devUtterances();
    // A few read sentences hold under a second of detected speech and are refused as too_short.
    const results = await Promise.all(
      utterances.map(({ file }) => engine.embedFile(new Uint8Array(readFileSync(file))).catch((error: ProblemError) => error.code)),
    );
    results.forEach((result, i) => {
      if (typeof result !== 'string') embeddings.push({ ...result, speaker: utterances[i]!.speaker });
      else expect(result).toBe('too_short');
    });
    expect(embeddings.length).toBeGreaterThanOrEqual(utterances.length - SPEAKERS.length);
  }, 300_000);
  afterAll(async () => {
    await engine.close();
    tmp.remove();
  });

  it('scores same-speaker pairs above different-speaker pairs', () => {
    const same: number[] = [];
    const different: number[] = [];
    for (let i = 0; i < embeddings.length; i++) {
      for (let j = i + 1; j < embeddings.length; j++) {
        (embeddings[i]!.speaker === embeddings[j]!.speaker ? same : different).push(engine.cosine(embeddings[i]!, embeddings[j]!));
      }
    }
    // Share of (same, different) pairs ranked the right way round: the ROC AUC.
    let ordered = 0;
    for (const s of same) for (const d of different) ordered += s > d ? 1 : s === d ? 0.5 : 0;
    const auc = ordered / (same.length * different.length);
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    console.info(`${embeddings[0]!.model}: same ${mean(same).toFixed(3)}, different ${mean(different).toFixed(3)}, AUC ${auc.toFixed(3)}`);
    if (realBundledModelPresent()) {
      expect(embeddings[0]!.model).toBe(BUNDLED_MODEL);
      expect(mean(same)).toBeGreaterThan(mean(different));
      expect(auc).toBeGreaterThan(0.85);
    } else {
      expect(auc).toBeGreaterThan(0);
    }
  });
});
