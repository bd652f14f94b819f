import { ClientView } from './client-view.ts';
import { type SendRecord, type Visitor, type VisitorRecord } from './visitor.ts';
/** How long one message may be retried before the visitor gives up on it. */
export declare const SEND_RETRY_WINDOW_MS = 60000;
interface PublishError {
    code?: number;
    message?: string;
    temporary?: boolean;
}
/** Temporary server errors and the client's own codes (< 100: timeout, transport closed…) are worth a retry. */
export declare const isRetryable: (err: PublishError) => boolean;
export declare class CentrifugeVisitor implements Visitor {
    readonly label: string;
    readonly kind: 'centrifuge';
    readonly view: ClientView;
    readonly sends: Map<string, SendRecord>;
    /** Local port of the current WebSocket connection (see TcpBalancer.backendOf). */
    localPort: number | undefined;
    recoveryFailures: number;
    private readonly session;
    private conversation;
    private client;
    private subscription;
    private readonly inFlight;
    private closed;
    constructor(label: string, baseUrl: string, companyId: string);
    /** The visitor's session (`X-Session-Id`): another client of the same session may follow its conversation. */
    get sessionId(): string;
    get conversationId(): string;
    get inFlightCount(): number;
    start(timeoutMs?: number): Promise<void>;
    /** Sends one message; resolves when it was acknowledged or given up on (never rejects). */
    send(content: string): Promise<void>;
    settle(timeoutMs: number): Promise<void>;
    close(): void;
    record(): VisitorRecord;
    private publishUntilAcked;
    /** Reads pages from the newest back until one overlaps what is shown (merge by id), as the SDK does. */
    private reconcileFromRest;
}
export {};
