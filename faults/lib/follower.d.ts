import { ClientView } from './client-view.ts';
import { type SdkSession } from './rest.ts';
export interface Resubscription {
    at: number;
    code: number;
    /** Filled in once subscribed again: whether the engine recovered the gap from history. */
    recovered?: boolean;
}
export declare class Follower {
    readonly label: string;
    private readonly session;
    private readonly conversationId;
    readonly view: ClientView;
    readonly resubscriptions: Resubscription[];
    private client;
    private subscription;
    constructor(label: string, session: SdkSession, conversationId: string);
    start(timeoutMs?: number): Promise<void>;
    close(): void;
}
