/**
 * Kaiser-window filter design, shared by the service's resampler (origin/src/voiceprint/resample.ts)
 * and the watermark's (shared-schema/src/watermark/resample.ts): one copy of the formulas.
 */

/** Modified Bessel function of the first kind, order 0 (power series; converges fast for x ≤ 20). */
export function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const quarter = (x * x) / 4;
  for (let k = 1; term > sum * 1e-17; k++) {
    term *= quarter / (k * k);
    sum += term;
  }
  return sum;
}

/** Kaiser's formulas: window shape for a given attenuation, and the length a transition width needs. */
export function kaiserDesign(attenuationDb: number, transitionCyclesPerSample: number): { beta: number; length: number } {
  const beta = attenuationDb > 50 ? 0.1102 * (attenuationDb - 8.7) : 0.5842 * (attenuationDb - 21) ** 0.4 + 0.07886 * (attenuationDb - 21);
  const length = Math.ceil((attenuationDb - 7.95) / (2.285 * 2 * Math.PI * transitionCyclesPerSample)) + 1;
  return { beta, length };
}
