/**
 * The nearest-rank percentile of `values` (`p` from 0 to 100): the smallest value at or below which `p` % of them
 * fall. 0 for no values. `sorted` says the values are sorted ascending already (a large sample sorted once).
 */
export declare function percentile(values: ArrayLike<number>, p: number, sorted?: boolean): number;
/** The median (nearest rank) of `values`. */
export declare const median: (values: ArrayLike<number>) => number;
