import type { MessageSnapshot } from '@parley/webchat-sdk';
export interface ViewedMessage {
    id: string;
    role: string;
    status: 'partial' | 'complete';
    clientMessageId: string | null;
    text: string;
    errorCodes: string[];
    /** Sequence of the last envelope applied (a REST snapshot carries none and keeps it). */
    sequence: number;
    /** When (epoch ms) this client first showed the message complete. */
    completedAt?: number;
}
/** Markdown of a snapshot's blocks, and the codes of its error blocks. */
export declare function contentOf(snapshot: Pick<MessageSnapshot, 'blocks'>): {
    text: string;
    errorCodes: string[];
};
export declare class ClientView {
    readonly messages: Map<string, ViewedMessage>;
    /** Messages shown complete twice with different content (two final answers to one message). */
    readonly conflictingCompletes: Set<string>;
    /** Envelopes the ordering rule dropped (stale or repeated sequences). */
    dropped: number;
    private readonly waiters;
    /** Applies one publication's data as a MessageEnvelope (unknown versions are ignored, as the contract says). */
    applyEnvelope(data: unknown): void;
    /** Applies a REST snapshot (no sequence): replaces what is shown, but never reopens a complete message. */
    applySnapshot(snapshot: MessageSnapshot): void;
    /** Resolves once `predicate` holds over the view, or with false after `timeoutMs`. */
    holdsWithin(predicate: (view: ClientView) => boolean, timeoutMs: number): Promise<boolean>;
    private put;
}
