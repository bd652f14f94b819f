import type {
  Broker,
  BrokerEventHandler,
  HistoryRequest,
  HistoryResult,
  Publication,
} from '../broker/types.ts';

/**
 * Wraps a real broker to inject the faults a distributed deployment sees: publication deliveries lost in PUB/SUB
 * (`dropOffsets`) and publications landing while a history read is in flight (`beforeHistory`/`afterHistory`).
 */
export class FaultyBroker implements Broker {
  readonly dropOffsets = new Set<number>();
  /** Runs (once) just before the next history read reaches the real broker. */
  beforeHistory: (() => Promise<void>) | undefined;
  /** Runs (once) after the next history read returned, before the engine sees the result. */
  afterHistory: (() => Promise<void>) | undefined;

  constructor(private readonly inner: Broker) {}

  run(handler: BrokerEventHandler): Promise<void> {
    return this.inner.run({
      onJoin: (channel, info) => handler.onJoin(channel, info),
      onLeave: (channel, info) => handler.onLeave(channel, info),
      onControl: (message) => handler.onControl(message),
      onPublication: (channel: string, publication: Publication, epoch: string | undefined) => {
        if (publication.offset !== undefined && this.dropOffsets.delete(publication.offset)) return;
        handler.onPublication(channel, publication, epoch);
      },
    });
  }

  async history(request: HistoryRequest): Promise<HistoryResult> {
    const before = this.beforeHistory;
    this.beforeHistory = undefined;
    if (before) await before();
    const result = await this.inner.history(request);
    const afterRead = this.afterHistory;
    this.afterHistory = undefined;
    if (afterRead) await afterRead();
    return result;
  }

  subscribe(channels: string[]): Promise<void> {
    return this.inner.subscribe(channels);
  }
  unsubscribe(channels: string[]): Promise<void> {
    return this.inner.unsubscribe(channels);
  }
  publish(request: Parameters<Broker['publish']>[0]): ReturnType<Broker['publish']> {
    return this.inner.publish(request);
  }
  publishJoin(...args: Parameters<Broker['publishJoin']>): Promise<void> {
    return this.inner.publishJoin(...args);
  }
  publishLeave(...args: Parameters<Broker['publishLeave']>): Promise<void> {
    return this.inner.publishLeave(...args);
  }
  publishControl(message: string): Promise<void> {
    return this.inner.publishControl(message);
  }
  removeHistory(channel: string): Promise<void> {
    return this.inner.removeHistory(channel);
  }
  healthy(): boolean {
    return this.inner.healthy();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
