import type { MessageSnapshot } from '../messages/message.ts';

/**
 * The newest snapshot of every reply this node is streaming. Partial updates are written to the database only
 * every `streamPersistIntervalMs`, so REST reads overlay these to show a message still streaming as it is now.
 */
export class LiveSnapshots {
  private readonly byId = new Map<string, MessageSnapshot>();

  set(snapshot: MessageSnapshot): void {
    this.byId.set(snapshot.id, snapshot);
  }

  delete(id: string): void {
    this.byId.delete(id);
  }

  overlay(messages: MessageSnapshot[]): MessageSnapshot[] {
    return messages.map((m) => (m.status === 'partial' ? (this.byId.get(m.id) ?? m) : m));
  }

  get size(): number {
    return this.byId.size;
  }
}
