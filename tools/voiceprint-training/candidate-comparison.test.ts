import { describe, expect, it } from 'vitest';
import { beatsEverywhere, compareEers, comparisonTable } from './candidate-comparison.js';

const shipped = { sample_vs_sample: { all: 5.53, cv61: 10.84, dsp20: 0 }, enrollment_vs_enrollment: { all: 0.22 } };

describe('a candidate against the shipped model', () => {
  it('wins only when lower in every condition and set, a zero kept at zero counting as no worse', () => {
    const better = { sample_vs_sample: { all: 5.1, cv61: 9.9, dsp20: 0 }, enrollment_vs_enrollment: { all: 0.2 } };
    expect(beatsEverywhere(compareEers(shipped, better))).toBe(true);
  });

  it('loses on one set that is worse, equal, or not measured', () => {
    const worseOnce = { sample_vs_sample: { all: 5.1, cv61: 11.2, dsp20: 0 }, enrollment_vs_enrollment: { all: 0.2 } };
    const equalOnce = { sample_vs_sample: { all: 5.1, cv61: 9.9, dsp20: 0 }, enrollment_vs_enrollment: { all: 0.22 } };
    const missingOne = { sample_vs_sample: { all: 5.1, cv61: 9.9, dsp20: 0 } };
    for (const candidate of [worseOnce, equalOnce, missingOne]) expect(beatsEverywhere(compareEers(shipped, candidate))).toBe(false);
    expect(compareEers(shipped, missingOne).at(-1)).toEqual({
      condition: 'enrollment_vs_enrollment',
      set: 'all',
      shipped: 0.22,
      candidate: null,
      better: false,
    });
    expect(comparisonTable('v2', 'v3', compareEers(shipped, missingOne))).toContain(
      '| enrollment vs enrollment | all | 0.22 | not measured | no |',
    );
  });

  it('never wins against nothing', () => {
    expect(beatsEverywhere(compareEers({}, { sample_vs_sample: { all: 1 } }))).toBe(false);
  });
});
