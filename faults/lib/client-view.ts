// What one client shows: every message it knows with its latest state, built from envelopes by the ordering rule
// (an envelope whose sequence is not above the last one seen for that message is dropped) and from REST pages
// when the realtime engine could not recover a gap. The fault figures compare this view with the database.
import type { MessageEnvelope, MessageSnapshot } from '@parley/webchat-sdk';

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
export function contentOf(snapshot: Pick<MessageSnapshot, 'blocks'>): { text: string; errorCodes: string[] } {
  const blocks = snapshot.blocks as Array<{ type: string; content?: string; code?: string }>;
  return {
    text: blocks
      .filter((b) => b.type === 'markdown')
      .map((b) => b.content ?? '')
      .join(''),
    errorCodes: blocks.filter((b) => b.type === 'error').map((b) => b.code ?? 'unknown'),
  };
}

const finalContent = (m: Pick<ViewedMessage, 'text' | 'errorCodes'>) =>
  `${m.text}\u0000${m.errorCodes.join(',')}`;

export class ClientView {
  readonly messages = new Map<string, ViewedMessage>();
  /** Messages shown complete twice with different content (two final answers to one message). */
  readonly conflictingCompletes = new Set<string>();
  /** Envelopes the ordering rule dropped (stale or repeated sequences). */
  dropped = 0;
  private readonly waiters = new Set<() => void>();

  /** Applies one publication's data as a MessageEnvelope (unknown versions are ignored, as the contract says). */
  applyEnvelope(data: unknown): void {
    const envelope = data as MessageEnvelope;
    if (envelope?.version !== 1 || !envelope.message_snapshot?.id) return;
    const snapshot = envelope.message_snapshot;
    const current = this.messages.get(snapshot.id);
    if (current && envelope.sequence <= current.sequence) {
      this.dropped++;
      return;
    }
    this.put(snapshot, envelope.sequence, current);
  }

  /** Applies a REST snapshot (no sequence): replaces what is shown, but never reopens a complete message. */
  applySnapshot(snapshot: MessageSnapshot): void {
    const current = this.messages.get(snapshot.id);
    this.put(snapshot, current?.sequence ?? 0, current);
  }

  /** Resolves once `predicate` holds over the view, or with false after `timeoutMs`. */
  async holdsWithin(predicate: (view: ClientView) => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 250));
        this.waiters.add(wake);
      });
    }
    return true;
  }

  private put(snapshot: MessageSnapshot, sequence: number, current: ViewedMessage | undefined): void {
    const next: ViewedMessage = {
      id: snapshot.id,
      role: snapshot.role,
      status: snapshot.status === 'complete' ? 'complete' : 'partial',
      clientMessageId: snapshot.client_message_id ?? null,
      ...contentOf(snapshot),
      sequence,
      ...(snapshot.status === 'complete' ? { completedAt: Date.now() } : {}),
    };
    if (current?.status === 'complete') {
      if (next.status === 'complete' && finalContent(next) !== finalContent(current))
        this.conflictingCompletes.add(snapshot.id);
      current.sequence = Math.max(current.sequence, sequence);
      return;
    }
    this.messages.set(snapshot.id, next);
    for (const wake of [...this.waiters]) wake();
  }
}
