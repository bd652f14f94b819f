import { MemoryStreamStore } from './memory-stream.ts';
import type { BrokerEventHandler, ClientInfo, PresenceStats, StreamPosition } from './types.ts';

/** What the hub needs from an attached broker node to deliver events to it. */
export interface MemoryNode {
  isSubscribed(channel: string): boolean;
  readonly eventHandler: BrokerEventHandler;
}

interface PresenceEntry {
  info: ClientInfo;
  expiresAt: number;
}

interface IdempotentResult {
  position: StreamPosition | undefined;
  expiresAt: number;
}

export interface MemoryHubOptions {
  /**
   * How often the one shared timer reclaims expired streams, presence entries and idempotency results. Reads
   * expire lazily, so this only bounds memory, never correctness. Default 10 s.
   */
  sweepIntervalMs?: number;
}

/**
 * The state a set of in-process nodes share: streams, presence, idempotency results and the node list used for
 * fan-out. A `MemoryBroker` without an explicit hub gets a private one (a single node, Centrifugo's memory engine);
 * several brokers given one hub behave as nodes of one cluster inside one process.
 */
export class MemoryHub {
  readonly streams = new MemoryStreamStore();
  private readonly nodes = new Set<MemoryNode>();
  private readonly presence = new Map<string, Map<string, PresenceEntry>>();
  private readonly idempotency = new Map<string, IdempotentResult>();
  private readonly sweepIntervalMs: number;
  private sweeper: NodeJS.Timeout | undefined;
  private users = 0;

  constructor(options: MemoryHubOptions = {}) {
    this.sweepIntervalMs = options.sweepIntervalMs ?? 10_000;
  }

  /** Counts a broker or presence manager using the hub; the shared sweep timer runs while there is one. */
  retain(): void {
    this.users += 1;
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(Date.now()), this.sweepIntervalMs);
      this.sweeper.unref();
    }
  }

  release(): void {
    this.users = Math.max(0, this.users - 1);
    if (this.users === 0 && this.sweeper !== undefined) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  attach(node: MemoryNode): void {
    this.nodes.add(node);
  }

  detach(node: MemoryNode): void {
    this.nodes.delete(node);
  }

  /** Calls `deliver` for every attached node subscribed to `channel`, or every node when `channel` is undefined. */
  forEachNode(channel: string | undefined, deliver: (handler: BrokerEventHandler) => void): unknown[] {
    const errors: unknown[] = [];
    for (const node of this.nodes) {
      if (channel !== undefined && !node.isSubscribed(channel)) continue;
      try {
        deliver(node.eventHandler);
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }

  idempotentResult(key: string, now: number): IdempotentResult | undefined {
    const result = this.idempotency.get(key);
    if (result === undefined) return undefined;
    if (result.expiresAt > now) return result;
    this.idempotency.delete(key);
    return undefined;
  }

  saveIdempotentResult(key: string, position: StreamPosition | undefined, expiresAt: number): void {
    this.idempotency.set(key, { position, expiresAt });
  }

  addPresence(channel: string, clientId: string, info: ClientInfo, expiresAt: number): void {
    let entries = this.presence.get(channel);
    if (entries === undefined) {
      entries = new Map();
      this.presence.set(channel, entries);
    }
    entries.set(clientId, { info, expiresAt });
  }

  removePresence(channel: string, clientId: string): void {
    const entries = this.presence.get(channel);
    if (entries === undefined) return;
    entries.delete(clientId);
    if (entries.size === 0) this.presence.delete(channel);
  }

  /** Live entries of a channel; expired ones are dropped on the way. */
  presenceOf(channel: string, now: number): Map<string, ClientInfo> {
    const live = new Map<string, ClientInfo>();
    const entries = this.presence.get(channel);
    if (entries === undefined) return live;
    for (const [clientId, entry] of entries) {
      if (entry.expiresAt > now) live.set(clientId, entry.info);
      else entries.delete(clientId);
    }
    if (entries.size === 0) this.presence.delete(channel);
    return live;
  }

  presenceStats(channel: string, now: number): PresenceStats {
    const live = this.presenceOf(channel, now);
    const users = new Set<string>();
    for (const info of live.values()) users.add(info.user);
    return { numClients: live.size, numUsers: users.size };
  }

  sweep(now: number): void {
    this.streams.sweep(now);
    for (const [key, result] of this.idempotency) if (result.expiresAt <= now) this.idempotency.delete(key);
    for (const channel of [...this.presence.keys()]) this.presenceOf(channel, now);
  }
}
