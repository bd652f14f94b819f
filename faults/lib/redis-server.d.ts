/** True when a Redis on `port` answers PING with PONG within a second. */
export declare function redisAnswers(port: number): Promise<boolean>;
export declare class PrivateRedis {
    readonly port: number;
    private child;
    private readonly log;
    private constructor();
    static create(logFile: string): Promise<PrivateRedis>;
    get url(): string;
    /** Starts redis-server on this Redis's port (again, after a stop) and waits until it answers PING. */
    start(): Promise<void>;
    /** Stops redis-server: SIGKILL is a crash (nothing flushed), SIGTERM a clean shutdown. Waits for the exit. */
    stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
}
