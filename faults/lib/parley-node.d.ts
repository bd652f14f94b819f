export declare const repoRoot: string;
export interface NodeExit {
    code: number | null;
    signal: NodeJS.Signals | null;
    /** True when the suite sent the signal that ended it. */
    expected: boolean;
    at: number;
}
export interface ParleyNodeOptions {
    name: string;
    port: number;
    env: Record<string, string>;
    logFile: string;
    /** Write a JSON line of process figures to this file every `reportIntervalMs` (the soak's view inside). */
    report?: {
        file: string;
        intervalMs: number;
    };
}
export declare class ParleyNode {
    readonly options: ParleyNodeOptions;
    private child;
    private readonly log;
    readonly exits: NodeExit[];
    private expectingExit;
    constructor(options: ParleyNodeOptions);
    get name(): string;
    get port(): number;
    get url(): string;
    get logFile(): string;
    get running(): boolean;
    /** Exits nobody asked for (a crash: an unhandled error, an exit on a lost connection…). */
    get unexpectedExits(): NodeExit[];
    /** Starts the node (again, on the same port after a stop) and waits until /readyz answers 200. */
    start(timeoutMs?: number): Promise<void>;
    /** True when `path` (default /healthz) answers 200 within 2 s, straight to the node (not through the balancer). */
    answers(path?: string): Promise<boolean>;
    /** `kill -9`: the process dies on the spot, mid-reply, with nothing flushed. */
    kill9(): Promise<void>;
    /**
     * SIGTERM and wait for the exit (a graceful drain); resolves with the exit code, or null when it did not exit
     * within `timeoutMs` (it is then killed).
     */
    terminate(timeoutMs?: number): Promise<number | null>;
    /** Why the node's last run ended, as its log says (Node's crash report, or its last error log line). */
    errorHint(): string;
    private signal;
}
/**
 * One line out of a node's output: Node's own crash report ("Unhandled 'error' event", an uncaught exception
 * with its `code`), else the last error-level JSON log line.
 */
export declare function crashSummary(output: string): string;
