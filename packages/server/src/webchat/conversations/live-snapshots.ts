import type { MessageSnapshot } from '../messages/message.ts';

/** A streaming reply as its newest envelope carries it. */
export interface LiveSnapshot {
  snapshot: MessageSnapshot;
  /** The sequence of that envelope. */
  sequence: number;
}

/**
 * The newest snapshot of every reply this node is streaming. Partial updates are written to the database only
 * every `streamPersistIntervalMs`, so REST reads overlay these to show a message still streaming as it is now,
 * and a client subscribing mid-stream gets it with its real sequence.
 */
export class LiveSnapshots {
  private readonly byId = new Map<string, LiveSnapshot>();

  set(snapshot: MessageSnapshot, sequence: number): void {
    this.byId.set(snapshot.id, { snapshot, sequence });
  }

  get(id: string): LiveSnapshot | undefined {
    return this.byId.get(id);
  }

  delete(id: string): void {
    this.byId.delete(id);
  }

  overlay(messages: MessageSnapshot[]): MessageSnapshot[] {
    return messages.map((m) => (m.status === 'partial' ? (this.byId.get(m.id)?.snapshot ?? m) : m));
  }

  get size(): number {
    return this.byId.size;
  }
}
