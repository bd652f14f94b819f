export interface LoadOptions {
    url: string;
    method: string;
    headers: Record<string, string>;
    body: string;
    connections: number;
    /** Seconds to run. */
    duration: number;
    /** Requests per second across all connections; omitted = as fast as the server answers. */
    overallRate?: number;
}
export interface LoadResult {
    requests: {
        average: number;
        total: number;
    };
    /** Milliseconds. */
    latency: {
        p50: number;
        p99: number;
        average: number;
        max: number;
    };
    '2xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
    /** Seconds. */
    duration: number;
}
/** Runs the load and resolves with its figures; a socket error or malformed response rejects. */
export declare function runLoad(options: LoadOptions): Promise<LoadResult>;
