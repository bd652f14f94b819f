export declare class PrivatePostgres {
    readonly version: string;
    readonly name: string;
    readonly port: number;
    private releaseCleanup;
    private constructor();
    /** Creates the cluster, starts it and creates Parley's database; dropped again by the cleanup handlers. */
    static create(): Promise<PrivatePostgres>;
    /** What Parley's DATABASE_URL points at. */
    get url(): string;
    /** Starts the cluster; resolves once it accepts connections (pg_ctl waits). */
    start(): Promise<void>;
    /** Stops the cluster; `fast` disconnects every session and shuts down cleanly (pg_ctl -m fast). */
    stop(mode?: 'fast' | 'smart' | 'immediate'): Promise<void>;
    /** Terminates every backend connected to Parley's database (what a failover or an admin's kill does). */
    terminateBackends(): Promise<number>;
    /** One query on Parley's database over a fresh connection (the suite's own reads, never a node's pool). */
    query<R extends object>(text: string, params?: unknown[]): Promise<R[]>;
    /** Stops and deletes the cluster with its data. */
    drop(): Promise<void>;
    private psql;
}
