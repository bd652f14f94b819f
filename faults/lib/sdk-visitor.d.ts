import { type Visitor, type VisitorRecord } from './visitor.ts';
export declare class SdkVisitor implements Visitor {
    readonly label: string;
    private readonly baseUrl;
    private readonly companyId;
    readonly kind: 'sdk';
    private chat;
    private readonly sends;
    private readonly inFlight;
    /** Final texts per message key, from `message:completed` (the SDK promises one per message). */
    private readonly completions;
    private recoveryFailures;
    constructor(label: string, baseUrl: string, companyId: string);
    get inFlightCount(): number;
    start(timeoutMs?: number): Promise<void>;
    send(content: string): Promise<void>;
    settle(timeoutMs: number): Promise<void>;
    close(): void;
    record(): VisitorRecord;
}
