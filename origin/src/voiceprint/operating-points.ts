import type { TrialCondition } from '@vip/shared-schema';
import { z } from 'zod';

/** What a trial condition decides on: the cosine, or its AS-norm normalization against the model's cohort. */
export const TRIAL_SCORES = ['cosine', 'as_norm'] as const;
export type TrialScoreKind = (typeof TRIAL_SCORES)[number];

export function scoreOf(condition: { score?: TrialScoreKind | undefined }): TrialScoreKind {
  return condition.score ?? 'cosine';
}

/*
 * Each kind of trial (TRIAL_CONDITIONS) is scored and thresholded on its own because the score
 * distributions differ: a short recording against another, a recording against an averaged
 * enrollment, two averaged enrollments (docs/DECISIONS.md, "Operating points per trial").
 * Compare with `audio2` is sample vs sample; compare with `voice_id`, Variant B detection and
 * screening are sample vs enrolled; identity conflicts are enrollment vs enrollment.
 */

/**
 * What the evaluation on dev/ measured for one condition (tools/voiceprint-training/calibrate.py),
 * on the condition's `score`: the cosine, or the cosine after adaptive score normalization against the
 * model's cohort (`as_norm`, cohort.ts; docs/DECISIONS.md, "Score normalization"). Every figure below
 * is on that score:
 * - `llr`: logistic-regression calibration, log-likelihood ratio = bias + score·w_score +
 *   q·w_quality + score·q·w_interaction, q = ln(speech seconds of the shorter side, clamped to 1..300);
 * - `verify`: the 1:1 point, the score where false accepts equal false rejects on dev;
 * - `impostor_tail`: a generalised Pareto distribution fitted (maximum likelihood) to the impostor
 *   scores above `from`, the top `exceed` share of them: P(impostor score ≥ s) =
 *   exceed · (1 + shape·(s − from)/scale)^(−1/shape) for s ≥ from (exceed · e^(−(s − from)/scale) when
 *   shape is 0). 1:N points extrapolate with it below the rates dev can measure;
 * - `genuine_quantiles`: [share, score] pairs, ascending: that share of same-speaker trials scored
 *   below that score (the false-reject rate of a point there).
 */
const conditionFields = z.object({
  /** Absent in calibrations made before normalization: the cosine. */
  score: z.enum(TRIAL_SCORES).optional(),
  llr: z.object({ bias: z.number(), w_score: z.number(), w_quality: z.number(), w_interaction: z.number() }),
  verify: z.number(),
  impostor_tail: z.object({
    from: z.number(),
    exceed: z.number().gt(0).max(1),
    scale: z.number().positive(),
    shape: z.number().min(-1).max(1),
  }),
  genuine_quantiles: z.array(z.tuple([z.number().gt(0).lt(1), z.number()])).min(2),
});

/** A cosine calibration's scores are cosines. */
const withinCosine = (condition: z.infer<typeof conditionFields> & { exact_copy?: number | undefined }) =>
  scoreOf(condition) !== 'cosine' ||
  [
    condition.verify,
    condition.impostor_tail.from,
    ...condition.genuine_quantiles.map(([, score]) => score),
    condition.exact_copy ?? 0,
  ].every((value) => value >= -1 && value <= 1);

const cosineBounds = 'a cosine calibration lies within [-1, 1]';
const conditionCalibrationSchema = conditionFields.refine(withinCosine, cosineBounds);

export const calibrationSchema = z.object({
  /** The evaluation these figures come from, for the model card. */
  dataset: z.string(),
  sample_vs_sample: conditionCalibrationSchema,
  sample_vs_enrolled: conditionCalibrationSchema,
  enrollment_vs_enrollment: conditionFields
    .extend({
      /**
       * The lowest score between an enrollment and the same recordings sent again after a lossy round
       * trip (tools/voiceprint-training/duplicate-eval.ts): at or above it, a new enrollment is a copy of an enrolled voice.
       */
      exact_copy: z.number().optional(),
    })
    .refine(withinCosine, cosineBounds),
});

export type Calibration = z.infer<typeof calibrationSchema>;
type ConditionCalibration = z.infer<typeof conditionCalibrationSchema>;

/**
 * What 1:N decisions aim at. Outcomes a person cannot undo (a refused enrollment, a sample named as
 * a protected voice) are bounded by a false-positive identification rate per search at the design
 * registry size. The review band, whose holds an administrator clears, is set by how many
 * re-enrollments of an enrolled speaker it must catch; the evaluation reports the share of new
 * speakers it holds as the registry grows (the model card).
 */
export interface SearchTargets {
  designRegistrySize: number;
  /** Screening and detection: a sample falsely named as a protected voice. */
  screeningFpir: number;
  /** Identity conflict, refused outright although nobody else enrolled that speaker. */
  conflictStrictFpir: number;
  /** Identity conflict: share of re-enrollments of an enrolled speaker that pass unheld. */
  conflictReviewFnir: number;
}

export const defaultSearchTargets: SearchTargets = {
  designRegistrySize: 100_000,
  screeningFpir: 0.01,
  conflictStrictFpir: 0.001,
  conflictReviewFnir: 0.02,
};

/** Cosine thresholds of one model, per condition and use. */
export interface OperatingPoints {
  sample_vs_sample: { verify: number };
  sample_vs_enrolled: { verify: number; search: number };
  enrollment_vs_enrollment: { review: number; strict: number };
}

export interface TrialScore {
  /** Log-likelihood ratio of "same speaker" against "different speakers", natural log. */
  llr: number;
  /** Probability of "same speaker" under equal prior odds: 1 / (1 + e^−llr). */
  probability: number;
}

/**
 * The per-pair false-accept rate that gives `fpir` over a search of `n` independent candidates:
 * 1 − (1 − FPIR)^(1/N), computed without cancellation for small rates.
 */
export function perPairRate(fpir: number, n: number): number {
  return -Math.expm1(Math.log1p(-fpir) / n);
}

/** The highest score a condition can give: 1 for a cosine; a normalized score has no bound. */
function ceilingOf(condition: ConditionCalibration): number {
  return scoreOf(condition) === 'cosine' ? 1 : Number.POSITIVE_INFINITY;
}

/** The score at which the fitted impostor tail falls to `rate` (never below where the fit starts, never above `ceiling`). */
export function tailThreshold(tail: ConditionCalibration['impostor_tail'], rate: number, ceiling = 1): number {
  if (rate >= tail.exceed) return tail.from;
  const ratio = tail.exceed / rate;
  const above = tail.shape === 0 ? tail.scale * Math.log(ratio) : (tail.scale / tail.shape) * (ratio ** tail.shape - 1);
  return Math.min(ceiling, tail.from + above);
}

/** The score below which `share` of same-speaker trials fell on dev (linear between the stored quantiles). */
function genuineQuantile(quantiles: ConditionCalibration['genuine_quantiles'], share: number): number {
  const first = quantiles[0]!;
  if (share <= first[0]) return first[1];
  for (let i = 1; i < quantiles.length; i++) {
    const [rateBelow, cosineBelow] = quantiles[i - 1]!;
    const [rate, cosine] = quantiles[i]!;
    if (share <= rate) return cosineBelow + ((cosine - cosineBelow) * (share - rateBelow)) / (rate - rateBelow);
  }
  return quantiles.at(-1)![1];
}

export function operatingPoints(calibration: Calibration, targets: SearchTargets): OperatingPoints {
  const searchPoint = (condition: ConditionCalibration, fpir: number) =>
    Math.max(condition.verify, tailThreshold(condition.impostor_tail, perPairRate(fpir, targets.designRegistrySize), ceilingOf(condition)));
  const conflict = calibration.enrollment_vs_enrollment;
  // A copy of an enrolled voice's recordings is refused even where the fitted tail cannot promise the
  // strict FPIR at any cosine below 1 (docs/DECISIONS.md, "Speaker decisions").
  const strict = Math.min(searchPoint(conflict, targets.conflictStrictFpir), conflict.exact_copy ?? ceilingOf(conflict));
  return {
    sample_vs_sample: { verify: calibration.sample_vs_sample.verify },
    sample_vs_enrolled: {
      verify: calibration.sample_vs_enrolled.verify,
      search: searchPoint(calibration.sample_vs_enrolled, targets.screeningFpir),
    },
    enrollment_vs_enrollment: {
      // Never above the strict point: then nothing is held, and what the review band would catch is refused.
      review: Math.min(strict, Math.max(conflict.verify, genuineQuantile(conflict.genuine_quantiles, targets.conflictReviewFnir))),
      strict,
    },
  };
}

/**
 * A model without a dev calibration (a stand-in, or a fetched model this machine cannot evaluate)
 * uses its single manifest threshold everywhere: the pre-calibration behaviour, which the model card
 * of such a model must call out.
 */
export function uncalibratedPoints(threshold: number): OperatingPoints {
  return {
    sample_vs_sample: { verify: threshold },
    sample_vs_enrolled: { verify: threshold, search: threshold },
    enrollment_vs_enrollment: { review: threshold, strict: threshold },
  };
}

const MIN_SECONDS = 1;
const MAX_SECONDS = 300;

/** The calibrated LLR of a trial's score (the condition's `score`) with the shorter side's speech seconds. */
export function trialScore(
  calibration: Calibration | undefined,
  condition: TrialCondition,
  score: number,
  shorterSeconds: number,
): TrialScore | null {
  if (!calibration) return null;
  const { llr: w } = calibration[condition];
  const q = Math.log(Math.min(MAX_SECONDS, Math.max(MIN_SECONDS, shorterSeconds)));
  const llr = w.bias + score * w.w_score + q * w.w_quality + score * q * w.w_interaction;
  return { llr, probability: 1 / (1 + Math.exp(-llr)) };
}
