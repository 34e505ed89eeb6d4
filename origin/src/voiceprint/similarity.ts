import { createHash } from 'node:crypto';
import { ProblemError } from '@vip/shared-schema/problem';

/** An embedding only means something next to others of the same model, so it carries the model's name. */
export interface TaggedEmbedding {
  embedding: Float32Array;
  model: string;
}

function assertComparable(a: TaggedEmbedding, b: TaggedEmbedding): void {
  if (a.model !== b.model) {
    throw new ProblemError('model_mismatch', `An embedding of model "${a.model}" cannot be compared with one of model "${b.model}".`);
  }
  if (a.embedding.length !== b.embedding.length) {
    throw new ProblemError(
      'model_mismatch',
      `Embeddings of ${a.embedding.length} and ${b.embedding.length} dimensions cannot be compared.`,
    );
  }
}

/** Cosine similarity in [-1, 1]; refuses embeddings of different models. */
export function cosine(a: TaggedEmbedding, b: TaggedEmbedding): number {
  assertComparable(a, b);
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.embedding.length; i++) {
    dot += a.embedding[i]! * b.embedding[i]!;
    normA += a.embedding[i]! * a.embedding[i]!;
    normB += b.embedding[i]! * b.embedding[i]!;
  }
  const norms = Math.sqrt(normA * normB);
  return norms > 0 ? Math.max(-1, Math.min(1, dot / norms)) : 0;
}

/**
 * `sha256:<hex>` over the model name, a zero byte, then the embedding as little-endian float32: the
 * API shows this instead of the biometric vector, and the same voice under another model hashes apart.
 */
export function embeddingHash(embedding: Float32Array, model: string): string {
  const bytes = new Uint8Array(embedding.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < embedding.length; i++) view.setFloat32(i * 4, embedding[i]!, true);
  const hash = createHash('sha256')
    .update(model, 'utf8')
    .update(new Uint8Array([0]))
    .update(bytes)
    .digest('hex');
  return `sha256:${hash}`;
}

/**
 * Enrollment from several files: the speech-weighted mean of the per-file unit embeddings, renormalised.
 * Averaging (rather than embedding the concatenated speech) keeps each file's mean normalisation to
 * its own recording conditions and gives the enrolled voice the same kind of vector a single-file
 * verification produces; weighting by speech lets a long clean file count for more than a short one.
 */
export function averageEmbeddings(parts: Array<TaggedEmbedding & { speechSeconds: number }>): TaggedEmbedding {
  const first = parts[0];
  if (!first) throw new Error('averageEmbeddings needs at least one embedding');
  const sum = new Float32Array(first.embedding.length);
  for (const part of parts) {
    assertComparable(first, part);
    for (let i = 0; i < sum.length; i++) sum[i] = sum[i]! + part.embedding[i]! * part.speechSeconds;
  }
  let norm = 0;
  for (const value of sum) norm += value * value;
  norm = Math.sqrt(norm);
  return { model: first.model, embedding: sum.map((value) => value / norm) };
}
