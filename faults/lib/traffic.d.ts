import type { Visitor } from './visitor.ts';
export interface TrafficOptions {
    minIntervalMs: number;
    maxIntervalMs: number;
    maxInFlight: number;
}
export declare class Traffic {
    readonly visitors: Visitor[];
    private readonly options;
    private running;
    private loops;
    sent: number;
    constructor(visitors: Visitor[], options: TrafficOptions);
    start(): void;
    /** Stops sending new messages and waits (bounded) until every message in flight is acknowledged or given up. */
    stop(settleTimeoutMs: number): Promise<void>;
    private chat;
}
