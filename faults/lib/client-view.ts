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
  /** Complete, with a text that does not begin with every text shown for it before (see ShownTexts). */
  takenBack: boolean;
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

/**
 * Every text a client showed for each message, to check the contract that a reply's final text begins with every
 * text any client was shown for it (nothing shown is taken back). Only the texts that are no prefix of another are
 * kept: a final text that begins with those begins with all.
 */
export class ShownTexts {
  private readonly byId = new Map<string, string[]>();

  note(id: string, text: string): void {
    const kept = this.byId.get(id) ?? [];
    if (kept.some((k) => k.startsWith(text))) return;
    this.byId.set(id, [...kept.filter((k) => !text.startsWith(k)), text]);
  }

  /** Whether `final` fails to begin with some text shown for `id`. */
  takenBack(id: string, final: string): boolean {
    return (this.byId.get(id) ?? []).some((shown) => !final.startsWith(shown));
  }
}

const finalContent = (m: Pick<ViewedMessage, 'text' | 'errorCodes'>) =>
  `${m.text}\u0000${m.errorCodes.join(',')}`;

export class ClientView {
  readonly messages = new Map<string, ViewedMessage>();
  /** Messages shown complete twice with different content (two final answers to one message). */
  readonly conflictingCompletes = new Set<string>();
  /** Envelopes the ordering rule dropped (stale or repeated sequences). */
  dropped = 0;
  private readonly shown = new ShownTexts();
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
    const content = contentOf(snapshot);
    const status = snapshot.status === 'complete' ? 'complete' : 'partial';
    const next: ViewedMessage = {
      id: snapshot.id,
      role: snapshot.role,
      status,
      clientMessageId: snapshot.client_message_id ?? null,
      ...content,
      sequence,
      ...(snapshot.status === 'complete' ? { completedAt: Date.now() } : {}),
      takenBack: status === 'complete' && this.shown.takenBack(snapshot.id, content.text),
    };
    if (current?.status !== 'complete') this.shown.note(snapshot.id, content.text);
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
