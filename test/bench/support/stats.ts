/** Nearest-rank percentile: with 30 samples, p99 is the largest one. */
export function percentile(values: number[], fraction: number): number {
  if (values.length === 0) throw new Error('percentile of no samples');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
