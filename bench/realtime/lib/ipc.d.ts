import { type ChildProcess } from 'node:child_process';
/** A forked bench process answering `{ id, cmd, ... }` requests with `{ id, ... }` replies over IPC. */
export declare class ChildProcessClient {
    private nextId;
    private readonly pending;
    private readonly ready;
    readonly process: ChildProcess;
    constructor(file: string, args: string[], execArgv?: string[]);
    whenReady(): Promise<Record<string, unknown>>;
    request<T = Record<string, unknown>>(cmd: string, body?: Record<string, unknown>, timeoutMs?: number): Promise<T>;
    /** Asks the process to exit (so `--cpu-prof` can write its profile); kills it if it does not. */
    stop(): Promise<void>;
}
type Handler = (message: Record<string, unknown>) => Promise<Record<string, unknown> | undefined> | Record<string, unknown> | undefined;
/** Child side: dispatches parent requests to `handlers` and replies with their result (or the error message). */
export declare function serveRequests(handlers: Record<string, Handler>, onExit: () => Promise<void> | void): void;
export {};
