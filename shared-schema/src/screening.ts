import { z } from 'zod';
import { uuid } from './common.js';

/** The most matches a screening answers with (docs/CONTRACT.md#closing-the-loop-receipts-pages). */
export const SCREENING_MAX_MATCHES = 5;

export const screeningMatchSchema = z
  .object({
    voice_id: uuid,
    confidence: z
      .number()
      .min(-1)
      .max(1)
      .describe("calibrated probability that the sample is this voice's speaker; the cosine similarity for an uncalibrated model"),
    license_url: z.url().describe('the public licensing page of the voice, where a licence is requested'),
  })
  .meta({ id: 'ScreeningMatch' });
export type ScreeningMatch = z.infer<typeof screeningMatchSchema>;

export const screeningResultSchema = z
  .object({
    check_id: uuid.describe('the audit entry of this screening'),
    model: z.string(),
    matches: z
      .array(screeningMatchSchema)
      .max(SCREENING_MAX_MATCHES)
      .describe("enrolled voices above the model's sample-vs-enrolled search point, best first; empty when none"),
  })
  .meta({ id: 'ScreeningResult' });
export type ScreeningResult = z.infer<typeof screeningResultSchema>;
