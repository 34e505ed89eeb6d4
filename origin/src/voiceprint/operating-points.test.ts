import { describe, expect, it } from 'vitest';
import { type Calibration, operatingPoints, perPairRate, tailThreshold, trialScore } from './operating-points.js';

const condition = (verify: number, from: number) => ({
  llr: { bias: -10, w_cosine: 20, w_quality: 0.5, w_interaction: 1 },
  verify,
  impostor_tail: { from, exceed: 0.01, scale: 0.03 },
});
const calibration: Calibration = {
  dataset: 'test',
  sample_vs_sample: condition(0.38, 0.5),
  sample_vs_enrolled: condition(0.4, 0.52),
  enrollment_vs_enrollment: condition(0.45, 0.55),
};
const targets = { designRegistrySize: 100_000, screeningFpir: 0.01, conflictReviewFpir: 0.01, conflictStrictFpir: 0.001 };

describe('1:N operating points', () => {
  it('spreads a per-search false-positive rate over the registry: 1 - (1 - FPIR)^(1/N)', () => {
    expect(perPairRate(0.01, 1)).toBeCloseTo(0.01, 12);
    expect(perPairRate(0.01, 100_000)).toBeCloseTo(1.00503e-7, 11);
    expect(1 - (1 - perPairRate(0.05, 1000)) ** 1000).toBeCloseTo(0.05, 10);
  });

  it('reads the threshold for a rate off the fitted exponential tail, never below where the fit starts', () => {
    const tail = { from: 0.5, exceed: 0.01, scale: 0.03 };
    expect(tailThreshold(tail, 0.01)).toBe(0.5);
    expect(tailThreshold(tail, 0.5)).toBe(0.5);
    expect(tailThreshold(tail, 0.0001)).toBeCloseTo(0.5 + 0.03 * Math.log(100), 12);
    expect(tailThreshold(tail, 1e-300)).toBe(1);
  });

  it('raises the search and conflict points with the design size and orders strict above review', () => {
    const small = operatingPoints(calibration, { ...targets, designRegistrySize: 10 });
    const large = operatingPoints(calibration, targets);
    expect(large.sample_vs_enrolled.search).toBeGreaterThan(small.sample_vs_enrolled.search);
    expect(large.enrollment_vs_enrollment.review).toBeGreaterThan(small.enrollment_vs_enrollment.review);
    expect(large.enrollment_vs_enrollment.strict).toBeGreaterThan(large.enrollment_vs_enrollment.review);
    expect(large.sample_vs_sample.verify).toBe(0.38);
    expect(large.sample_vs_enrolled.verify).toBe(0.4);
    // A search point is never looser than the 1:1 point of the same condition.
    const tiny = operatingPoints(calibration, { ...targets, designRegistrySize: 1, screeningFpir: 0.9 });
    expect(tiny.sample_vs_enrolled.search).toBe(0.52);
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
