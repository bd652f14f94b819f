/**
 * The nearest-rank percentile of `values` (`p` from 0 to 100): the smallest value at or below which `p` % of them
 * fall. 0 for no values. `sorted` says the values are sorted ascending already (a large sample sorted once).
 */
export function percentile(values: ArrayLike<number>, p: number, sorted = false): number {
  if (values.length === 0) return 0;
  const ordered = sorted ? values : Float64Array.from(values).sort();
  return ordered[Math.min(ordered.length - 1, Math.max(0, Math.ceil((p / 100) * ordered.length) - 1))]!;
}

/** The median (nearest rank) of `values`. */
export const median = (values: ArrayLike<number>): number => percentile(values, 50);
