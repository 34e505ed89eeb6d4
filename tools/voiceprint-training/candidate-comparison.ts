/**
 * Whether a candidate speaker model beats the shipped one on dev: the rule candidate.ts ships by.
 * Both sides are calibrate.py reports; what is compared is each condition's EER per set on the
 * scores the service decides with once the model has a cohort (the report's `normalized.eer_pct`).
 */

/** EER % per condition, then per set (`all` included), as calibrate.py reports it. */
export type EerTable = Record<string, Record<string, number>>;

export interface EerComparison {
  condition: string;
  set: string;
  shipped: number;
  candidate: number | null;
  /** Lower than the shipped model's, or zero where the shipped model's is zero too. */
  better: boolean;
}

/** Every condition and set of the shipped model's table, the candidate's figure beside it. */
export function compareEers(shipped: EerTable, candidate: EerTable): EerComparison[] {
  return Object.entries(shipped).flatMap(([condition, sets]) =>
    Object.entries(sets).map(([set, was]) => {
      const now = candidate[condition]?.[set] ?? null;
      return { condition, set, shipped: was, candidate: now, better: now !== null && (now < was || (now === 0 && was === 0)) };
    }),
  );
}

/** A candidate ships only when it is better in every condition and set, a set it lacks counting against it. */
export const beatsEverywhere = (comparisons: readonly EerComparison[]) =>
  comparisons.length > 0 && comparisons.every((comparison) => comparison.better);

/** The comparison as a Markdown table, for the terminal and the new model's card. */
export function comparisonTable(shippedName: string, candidateName: string, comparisons: readonly EerComparison[]): string {
  const rows = comparisons.map(
    ({ condition, set, shipped, candidate, better }) =>
      `| ${condition.replaceAll('_', ' ')} | ${set} | ${shipped.toFixed(2)} | ${candidate === null ? 'not measured' : candidate.toFixed(2)} | ${better ? 'yes' : 'no'} |`,
  );
  return [`| condition | set | ${shippedName} EER % | ${candidateName} EER % | better |`, '|---|---|---|---|---|', ...rows].join('\n');
}
