export declare class LatencyHistogram {
    readonly counts: number[];
    constructor(counts?: number[]);
    recordMicros(micros: number): void;
    merge(other: LatencyHistogram | number[]): void;
    get total(): number;
    /** The value (µs) below which `fraction` of the samples fall; the bucket's geometric middle. */
    percentileMicros(fraction: number): number;
}
/** Wall-clock milliseconds with sub-millisecond precision, comparable between processes on one machine. */
export declare function preciseNowMs(): number;
