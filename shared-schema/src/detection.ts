import { z } from 'zod';
import { TRIAL_CONDITIONS } from './enums.js';

/** `sha256:<hex>` of an embedding: the API shows this, never the vector. */
export const embeddingHashString = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/** docs/CONTRACT.md#comparison-result, plus the threshold and model the verdict was made with (docs/CONTRACT.md#answers-to-the-specifications-gaps). */
export const comparisonResultSchema = z
  .object({
    similarity: z.number().describe('cosine similarity of the two embeddings, in [-1, 1]'),
    normalized_score: z
      .number()
      .nullable()
      .describe(
        "the similarity after adaptive score normalization against the model's cohort of training speakers, where this trial condition is decided on it; null where it is decided on the similarity",
      ),
    is_same_speaker: z
      .boolean()
      .describe(
        'the score the condition is decided on (normalized_score, else similarity) >= threshold; evidence for review, not a verdict',
      ),
    embedding1_hash: embeddingHashString,
    embedding2_hash: embeddingHashString,
    threshold: z
      .number()
      .describe("the model's calibrated point for this trial condition, on normalized_score when it is not null, else on similarity"),
    model: z.string(),
    condition: z
      .enum(TRIAL_CONDITIONS)
      .extract(['sample_vs_sample', 'sample_vs_enrolled'])
      .describe('`sample_vs_sample` for two recordings, `sample_vs_enrolled` against a stored voice'),
    llr: z
      .number()
      .nullable()
      .describe('calibrated log-likelihood ratio of same against different speaker (natural log); null for an uncalibrated model'),
    probability: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .describe('probability of the same speaker under equal prior odds, from `llr`; null for an uncalibrated model'),
  })
  .meta({ id: 'ComparisonResult' });
export type ComparisonResult = z.infer<typeof comparisonResultSchema>;
