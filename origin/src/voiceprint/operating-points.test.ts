import { describe, expect, it } from 'vitest';
import { type Calibration, operatingPoints, perPairRate, tailThreshold, trialScore } from './operating-points.js';

const condition = (verify: number, from: number) => ({
  llr: { bias: -10, w_score: 20, w_quality: 0.5, w_interaction: 1 },
  verify,
  impostor_tail: { from, exceed: 0.01, scale: 0.03, shape: 0 },
  genuine_quantiles: [
    [0.01, verify + 0.1],
    [0.05, verify + 0.2],
    [0.2, verify + 0.3],
  ] as Array<[number, number]>,
});
const calibration: Calibration = {
  dataset: 'test',
  sample_vs_sample: condition(0.38, 0.5),
  sample_vs_enrolled: condition(0.4, 0.52),
  enrollment_vs_enrollment: condition(0.45, 0.55),
};
const targets = { designRegistrySize: 100_000, screeningFpir: 0.01, conflictStrictFpir: 0.001, conflictReviewFnir: 0.05 };

describe('1:N operating points', () => {
  it('spreads a per-search false-positive rate over the registry: 1 - (1 - FPIR)^(1/N)', () => {
    expect(perPairRate(0.01, 1)).toBeCloseTo(0.01, 12);
    expect(perPairRate(0.01, 100_000)).toBeCloseTo(1.00503e-7, 11);
    expect(1 - (1 - perPairRate(0.05, 1000)) ** 1000).toBeCloseTo(0.05, 10);
  });

  it('reads the threshold for a rate off the fitted tail, never below where the fit starts', () => {
    const exponential = { from: 0.5, exceed: 0.01, scale: 0.03, shape: 0 };
    expect(tailThreshold(exponential, 0.01)).toBe(0.5);
    expect(tailThreshold(exponential, 0.5)).toBe(0.5);
    expect(tailThreshold(exponential, 0.0001)).toBeCloseTo(0.5 + 0.03 * Math.log(100), 12);
    expect(tailThreshold(exponential, 1e-300)).toBe(1);
    // A bounded (negative-shape) tail reaches no further than from − scale/shape.
    const bounded = { from: 0.5, exceed: 0.01, scale: 0.08, shape: -0.2 };
    const survival = (s: number) => 0.01 * (1 + (-0.2 * (s - 0.5)) / 0.08) ** (-1 / -0.2);
    expect(survival(tailThreshold(bounded, 1e-5))).toBeCloseTo(1e-5, 12);
    expect(tailThreshold(bounded, 1e-300)).toBeCloseTo(0.5 + 0.08 / 0.2, 12);
    expect(tailThreshold(bounded, 1e-7)).toBeGreaterThan(tailThreshold(bounded, 1e-5));
  });

  it('raises the search and strict points with the design size and sets the review point by the share of duplicates it must catch', () => {
    const small = operatingPoints(calibration, { ...targets, designRegistrySize: 10 });
    const large = operatingPoints(calibration, targets);
    expect(large.sample_vs_enrolled.search).toBeGreaterThan(small.sample_vs_enrolled.search);
    expect(large.enrollment_vs_enrollment.strict).toBeGreaterThan(small.enrollment_vs_enrollment.strict);
    // 5 % of same-speaker enrollment pairs scored below verify + 0.2 on dev.
    expect(large.enrollment_vs_enrollment.review).toBeCloseTo(0.45 + 0.2, 12);
    expect(operatingPoints(calibration, { ...targets, conflictReviewFnir: 0.1 }).enrollment_vs_enrollment.review).toBeCloseTo(
      0.45 + 0.2 + (0.1 * 0.05) / 0.15,
      12,
    );
    // A review point above the strict point empties the band: what it would hold is refused.
    const tight = operatingPoints(calibration, { ...targets, designRegistrySize: 1, conflictStrictFpir: 0.5 });
    expect(tight.enrollment_vs_enrollment.review).toBe(tight.enrollment_vs_enrollment.strict);
    expect(large.sample_vs_sample.verify).toBe(0.38);
    expect(large.sample_vs_enrolled.verify).toBe(0.4);
    // A search point is never looser than the 1:1 point of the same condition.
    const tiny = operatingPoints(calibration, { ...targets, designRegistrySize: 1, screeningFpir: 0.9 });
    expect(tiny.sample_vs_enrolled.search).toBe(0.52);
  });

  it('refuses copies of an enrolled voice even where the fitted tail promises the strict rate at no cosine below 1', () => {
    const heavy = {
      ...calibration,
      enrollment_vs_enrollment: { ...condition(0.45, 0.55), impostor_tail: { from: 0.55, exceed: 0.02, scale: 0.3, shape: 0 } },
    };
    expect(operatingPoints(heavy, targets).enrollment_vs_enrollment.strict).toBe(1);
    const copies = { ...heavy, enrollment_vs_enrollment: { ...heavy.enrollment_vs_enrollment, exact_copy: 0.95 } };
    const points = operatingPoints(copies, targets);
    expect(points.enrollment_vs_enrollment.strict).toBe(0.95);
    expect(points.enrollment_vs_enrollment.review).toBeCloseTo(0.45 + 0.2, 12);
    // Where the tail alone already refuses below the copies' floor, the floor changes nothing.
    const light = { ...calibration, enrollment_vs_enrollment: { ...calibration.enrollment_vs_enrollment, exact_copy: 0.999 } };
    expect(operatingPoints(light, targets).enrollment_vs_enrollment.strict).toBe(
      operatingPoints(calibration, targets).enrollment_vs_enrollment.strict,
    );
  });

  it('turns a cosine and the shorter speech duration into a log-likelihood ratio and a probability', () => {
    const score = trialScore(calibration, 'sample_vs_sample', 0.6, 10)!;
    const q = Math.log(10);
    expect(score.llr).toBeCloseTo(-10 + 0.6 * 20 + q * 0.5 + 0.6 * q, 12);
    expect(score.probability).toBeCloseTo(1 / (1 + Math.exp(-score.llr)), 12);
    // Durations are clamped to 1..300 s.
    expect(trialScore(calibration, 'sample_vs_sample', 0.6, 0.01)!.llr).toBe(trialScore(calibration, 'sample_vs_sample', 0.6, 1)!.llr);
    expect(trialScore(undefined, 'sample_vs_sample', 0.6, 10)).toBeNull();
  });
});
