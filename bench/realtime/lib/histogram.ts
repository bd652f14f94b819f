/**
 * Log-bucketed latency histogram (16 buckets per power of two, about 4 % resolution), cheap to record into and
 * to merge across processes by adding counts.
 */
const PER_OCTAVE = 16;
const BUCKETS = 30 * PER_OCTAVE; // up to 2^30 µs ≈ 18 min

export class LatencyHistogram {
  readonly counts: number[];

  constructor(counts?: number[]) {
    this.counts = counts ? [...counts] : new Array<number>(BUCKETS).fill(0);
  }

  recordMicros(micros: number): void {
    const index = micros <= 1 ? 0 : Math.min(BUCKETS - 1, Math.floor(Math.log2(micros) * PER_OCTAVE));
    this.counts[index] = (this.counts[index] ?? 0) + 1;
  }

  merge(other: LatencyHistogram | number[]): void {
    const counts = Array.isArray(other) ? other : other.counts;
    for (let i = 0; i < BUCKETS; i++) this.counts[i] = (this.counts[i] ?? 0) + (counts[i] ?? 0);
  }

  get total(): number {
    return this.counts.reduce((sum, c) => sum + c, 0);
  }

  /** The value (µs) below which `fraction` of the samples fall; the bucket's geometric middle. */
  percentileMicros(fraction: number): number {
    const total = this.total;
    if (total === 0) return Number.NaN;
    const rank = Math.ceil(total * fraction);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i] ?? 0;
      if (seen >= rank) return 2 ** ((i + 0.5) / PER_OCTAVE);
    }
    return Number.POSITIVE_INFINITY;
  }
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable between processes on one machine. */
export function preciseNowMs(): number {
  return performance.timeOrigin + performance.now();
}
