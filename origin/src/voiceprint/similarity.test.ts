import { ProblemError } from '@vip/shared-schema/problem';
import { describe, expect, it } from 'vitest';
import { averageEmbeddings, cosine, embeddingHash } from './similarity.js';

const tagged = (values: number[], model = 'm') => ({ embedding: Float32Array.from(values), model });

describe('embedding comparison', () => {
  it('computes cosine similarity whatever the vectors’ lengths', () => {
    expect(cosine(tagged([1, 0]), tagged([3, 0]))).toBeCloseTo(1);
    expect(cosine(tagged([1, 0]), tagged([0, 2]))).toBeCloseTo(0);
    expect(cosine(tagged([1, 1]), tagged([-1, -1]))).toBeCloseTo(-1);
  });

  it('throws model_mismatch for embeddings of different models or sizes', () => {
    for (const [a, b] of [
      [tagged([1, 0], 'vip-speaker-v1'), tagged([1, 0], 'campplus-voxceleb')],
      [tagged([1, 0]), tagged([1, 0, 0])],
    ] as const) {
      const error = (() => {
        try {
          cosine(a, b);
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(ProblemError);
      expect((error as ProblemError).code).toBe('model_mismatch');
    }
  });

  it('hashes the float32 bytes together with the model name', () => {
    const vector = Float32Array.from([0.6, 0.8]);
    const hash = embeddingHash(vector, 'vip-speaker-v1');
    expect(hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(embeddingHash(Float32Array.from([0.6, 0.8]), 'vip-speaker-v1')).toBe(hash);
    expect(embeddingHash(vector, 'campplus-voxceleb')).not.toBe(hash);
    expect(embeddingHash(Float32Array.from([0.6, 0.8000001]), 'vip-speaker-v1')).not.toBe(hash);
  });

  it('averages enrollment embeddings weighted by speech and renormalises', () => {
    const average = averageEmbeddings([
      { ...tagged([1, 0]), speechSeconds: 3 },
      { ...tagged([0, 1]), speechSeconds: 1 },
    ]);
    expect(average.model).toBe('m');
    expect(average.embedding[0]).toBeCloseTo(3 / Math.sqrt(10));
    expect(average.embedding[1]).toBeCloseTo(1 / Math.sqrt(10));
    expect(() =>
      averageEmbeddings([
        { ...tagged([1, 0]), speechSeconds: 1 },
        { ...tagged([1, 0], 'other'), speechSeconds: 1 },
      ]),
    ).toThrow(ProblemError);
  });
});
