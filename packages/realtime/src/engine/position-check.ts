import type { StreamPosition } from '../broker/types.ts';
import type { EngineCore } from './core.ts';
import { type Subscription, SubscriptionState } from './subscription.ts';

/**
 * Stream reads in flight at once during a round: a round after the broker came back covers every positioned
 * channel of the node, and the reads are pipelined on one Redis connection (LIB bounds its own check the same way,
 * `clientPositionCheckConcurrency`).
 */
const CHECK_CONCURRENCY = 32;

/**
 * Periodic position check (docs/protocol.md "Positioning", LIB `checkPosition`): for channels with positioned
 * subscribers and no publication for `channelPositionCheckDelayMs`, compare each subscriber's position with
 * the stream top, so a publication lost in the broker is noticed even when nothing else is published. One
 * stream read per channel, not per subscriber; mismatches resubscribe with recovery (2500).
 */
export class PositionChecker {
  private running = false;
  /** A round over every positioned channel was asked for and has not started yet. */
  private everyChannelAsked = false;

  constructor(private readonly core: EngineCore) {}

  /**
   * One round over the quiet channels, or with `everyChannel` over all positioned channels, quiet or not: after
   * the broker lost its connection (`BrokerEventHandler.onRestored`), publications of any channel may have been
   * lost on the way to this node, and a busy channel's next publication may be long enough away. A round asked
   * for while one runs follows it.
   */
  async run(options: { everyChannel?: boolean } = {}): Promise<void> {
    if (options.everyChannel) this.everyChannelAsked = true;
    // Nothing to compare against while the broker is unreachable; the first round after it returns notices
    // whatever changed meanwhile (a Redis restarted without persistence starts every stream with a new epoch).
    if (this.running || !this.core.broker.healthy()) return;
    this.running = true;
    try {
      do {
        const quietMs = this.everyChannelAsked ? 0 : this.core.options.channelPositionCheckDelayMs;
        this.everyChannelAsked = false;
        const channels = this.core.hub.quietPositionedChannels(Date.now(), quietMs);
        let next = 0;
        const worker = async (): Promise<void> => {
          while (next < channels.length) await this.checkChannel(channels[next++]!);
        };
        await Promise.all(Array.from({ length: Math.min(CHECK_CONCURRENCY, channels.length) }, worker));
      } while (this.everyChannelAsked && this.core.broker.healthy());
    } finally {
      this.running = false;
    }
  }

  private async checkChannel(channel: string): Promise<void> {
    const { hub, broker, logger } = this.core;
    const subscribers = hub.subscribers(channel);
    const first = subscribers?.values().next().value as Subscription | undefined;
    const history = first?.options.history;
    if (subscribers === undefined || history === undefined) return;
    const before = hub.lastPublicationAt(channel);
    let top: StreamPosition;
    try {
      top = (await broker.history({ channel, limit: 0, history })).position;
    } catch (error) {
      logger.warn({ channel, error: String(error) }, 'position check failed');
      return;
    }
    // A publication that arrived during the read makes the comparison meaningless; check next round.
    if (hub.lastPublicationAt(channel) !== before) return;
    hub.markChecked(channel, Date.now());
    for (const sub of [...subscribers]) {
      if (sub.state !== SubscriptionState.Subscribed || !sub.flags.positioned) continue;
      if (sub.epoch !== top.epoch || sub.offset < top.offset) sub.session.onInsufficientState(sub);
    }
  }
}
