/** The three peers of the fan-out comparison, each behind the same tiny interface. */
export type ServerKind = 'engine' | 'ws' | 'socketio';
export interface BenchServer {
    port: number;
    /**
     * Server-side publish of a JSON text to every subscriber of `channel`; `delta` publishes it for fossil-delta
     * delivery (our engine only).
     */
    publish(channel: string, payload: string, delta?: boolean): void;
    connections(): number;
    close(): Promise<void>;
}
export declare const BENCH_SECRET = "bench-secret-key-of-sufficient-length";
/** Namespace of the bench channels on our engine: the webchat configuration (history 100 / 1 h, recovery). */
export declare const ENGINE_NAMESPACE = "bench";
/** Loads an optional package; the bench reports the peer as missing instead of failing to compile or run. */
export declare function optionalImport<T>(name: string): Promise<T | undefined>;
export declare function startServer(kind: ServerKind): Promise<BenchServer>;
