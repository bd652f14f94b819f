import type { PrivatePostgres } from './postgres-cluster.ts';
import type { VisitorRecord } from './visitor.ts';
export interface StoredMessage {
    id: string;
    conversationId: string;
    role: string;
    status: string;
    clientMessageId: string | null;
    position: number;
    createdAt: string;
    text: string;
    errorCodes: string[];
}
export interface Figures {
    /** Publishes that resolved: the server said "stored". */
    acked: number;
    /** User messages in the database. */
    stored: number;
    /** Acknowledged but not in the database. */
    lost: number;
    /** Acknowledged messages the sender's client shows complete at the end. */
    delivered: number;
    /** Digital-employee replies in the database / those the conversation's clients show complete. */
    replies: number;
    repliesShown: number;
    /** Two stored rows for one client_message_id, or one message shown complete with two different contents. */
    duplicates: number;
    /** Messages still `partial` in the database, plus messages a client still shows partial that are complete. */
    partial: number;
    partialInDatabase: number;
    partialOnlyInClient: number;
    /** User messages without a digital-employee reply after them (every one should get exactly one). */
    unanswered: number;
    /** Digital-employee replies beyond one per user message (e.g. an interrupted reply answered again). */
    extraReplies: number;
    /** Replies that ended with an error block (interrupted, failed, timed out), and their codes with counts. */
    errored: number;
    errorCodes: Record<string, number>;
    /** Sends a client gave up on (a permanent error or the retry window ran out): never acknowledged. */
    gaveUp: number;
    /** Sends the client gave up on (it shows them failed) that the database stored anyway. */
    gaveUpButStored: number;
    /** Sends still being retried when measured: neither acknowledged nor given up. */
    unsettled: number;
    /** Resubscriptions the engine could not recover (the client read REST instead). */
    recoveryFailures: number;
    /** Reasons the visitors gave up, with counts, for the report. */
    gaveUpReasons: Record<string, number>;
    /** The last error of each send a centrifuge visitor had to retry, with counts. */
    retriedReasons: Record<string, number>;
}
/** Every message of the company's conversations, in conversation order. */
export declare function readStoredMessages(pg: PrivatePostgres, companyId: string): Promise<StoredMessage[]>;
export declare function computeFigures(stored: StoredMessage[], visitors: VisitorRecord[]): Figures;
