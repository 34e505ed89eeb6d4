import { z } from 'zod';

/** `sha256:<hex>` of an embedding: the API shows this, never the vector. */
export const embeddingHashString = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/** Spec 2.3, plus the threshold and model the verdict was made with (DESIGN section 6). */
export const comparisonResultSchema = z
  .object({
    similarity: z.number().describe('cosine similarity of the two embeddings, in [-1, 1]'),
    is_same_speaker: z.boolean().describe('similarity >= threshold; evidence for review, not a verdict'),
    embedding1_hash: embeddingHashString,
    embedding2_hash: embeddingHashString,
    threshold: z.number(),
    model: z.string(),
  })
  .meta({ id: 'ComparisonResult' });
export type ComparisonResult = z.infer<typeof comparisonResultSchema>;
