// What every kind of visitor (official centrifuge client, Parley SDK) records, so the figures treat them alike.
import { waitForSettled } from '@parley/testing/wait';

/** One visitor message and what became of it. */
export interface SendRecord {
  clientMessageId: string;
  content: string;
  sentAt: number;
  attempts: number;
  /** When the publish resolved (the server says it is stored). */
  ackedAt?: number;
  /** Why the visitor gave up on it (a permanent error, or the retry window ran out). */
  gaveUp?: string;
  lastError?: string;
  /** Each attempt (centrifuge visitors): when it was sent, how long the answer took, the error if it failed. */
  answers?: PublishAnswer[];
}

export interface PublishAnswer {
  at: number;
  ms: number;
  error?: string;
}

/** A message as the client shows it at the end. */
export interface ShownMessage {
  id: string;
  role: string;
  /** `partial`/`complete` from the server; the SDK's own `pending`/`sent`/`failed` for unconfirmed sends. */
  status: string;
  clientMessageId: string | null;
  text: string;
  errorCodes: string[];
  /** Complete, with a text that does not begin with every text this client was shown for it before. */
  takenBack?: boolean;
}

export interface VisitorRecord {
  label: string;
  kind: 'centrifuge' | 'sdk';
  conversationId: string;
  sends: SendRecord[];
  view: ShownMessage[];
  /** Messages this client was shown complete twice with different content. */
  conflictingCompletes: string[];
  /** Resubscriptions the realtime engine could not recover (the client then read REST). */
  recoveryFailures: number;
}

export interface Visitor {
  readonly label: string;
  readonly kind: 'centrifuge' | 'sdk';
  readonly inFlightCount: number;
  start(timeoutMs?: number): Promise<void>;
  /** Sends one message; resolves once it is acknowledged or given up on. */
  send(content: string): Promise<void>;
  /** Waits (bounded) for every send in flight to be acknowledged or given up on. */
  settle(timeoutMs: number): Promise<void>;
  record(): VisitorRecord;
  close(): void;
}

/** The sends a visitor has in flight: counted for `inFlightCount`, awaited (bounded) by `settle`. */
export class SendsInFlight {
  private readonly sends = new Set<Promise<void>>();

  get size(): number {
    return this.sends.size;
  }

  /** `send`, kept in flight until it settles. */
  track(send: Promise<void>): Promise<void> {
    const tracked = send.finally(() => this.sends.delete(tracked));
    this.sends.add(tracked);
    return tracked;
  }

  /** Waits at most `timeoutMs` for every send in flight to settle (the rest stay unsettled in the records). */
  async settle(timeoutMs: number, what: string): Promise<void> {
    await waitForSettled(Promise.allSettled([...this.sends]), timeoutMs, what).catch(() => {});
  }
}
