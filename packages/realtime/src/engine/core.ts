import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Broker, HistoryResult, PresenceManager, StreamPosition } from '../broker/types.ts';
import { ErrorCode } from '../protocol/codes.ts';
import { ClientError, isBrokerUnavailable } from '../protocol/errors.ts';
import { TokenVerifier } from '../tokens/verifier.ts';
import type { DisconnectInfo, RealtimeHooks } from './hooks.ts';
import { Hub } from './hub.ts';
import type { Logger } from './logger.ts';
import { ChannelRegistry, type ResolvedChannelOptions } from './namespaces.ts';
import type { ResolvedEngineOptions } from './options.ts';
import { OutputScheduler } from './output.ts';
import type { ChannelPublication, EventHookName, HistoryFilter, SessionHost } from './session-host.ts';
import { type Subscription, SubscriptionState } from './subscription.ts';
import { TimerWheel } from './timer-wheel.ts';

/**
 * The state one node shares between its connections, the cluster, the position check and the server API:
 * options, channel rules, token verifier, broker and presence manager, the hub, the timer wheel and output
 * scheduler, and the channel operations sessions use (`SessionHost`). `RealtimeEngine` owns one and exposes
 * only its public API; the parts of the engine reach this state through here, never through `RealtimeEngine`.
 */
export class EngineCore implements SessionHost {
  readonly registry: ChannelRegistry;
  readonly verifier: TokenVerifier;
  readonly hub: Hub;
  readonly wheel: TimerWheel;
  readonly output = new OutputScheduler();
  readonly logger: Logger;
  /** The application's hooks; replaced only before the engine starts (`RealtimeEngine.setHooks`). */
  hooks: RealtimeHooks;
  /** This node's id (`uid` in `/api/info`). */
  readonly nodeId = randomUUID();
  readonly nodeName: string;

  constructor(
    readonly options: ResolvedEngineOptions,
    readonly broker: Broker,
    readonly presenceManager: PresenceManager,
  ) {
    this.logger = options.logger;
    this.hooks = options.hooks;
    this.registry = new ChannelRegistry(options.namespaces, options.withoutNamespace, options.channelRules);
    // A namespace that names a proxy that is not configured fails at start, not on the first subscribe.
    options.proxies.validate(this.registry.allOptions().map((o) => o.proxies));
    this.verifier = new TokenVerifier(options.token);
    this.hub = new Hub(broker, (error, channel) => {
      const fields = { channel, error: String(error) };
      if (isBrokerUnavailable(error)) this.logger.warn(fields, 'broker subscription failed');
      else this.logger.error(fields, 'broker subscription failed');
    });
    this.wheel = new TimerWheel(options.timerResolutionMs);
    this.nodeName = options.nodeName ?? `${hostname()}_${process.pid}`;
  }

  finishSubscription(sub: Subscription, info: DisconnectInfo | undefined): void {
    const wasSubscribed = sub.state === SubscriptionState.Subscribed;
    if (sub.state === SubscriptionState.Removed) return;
    sub.state = SubscriptionState.Removed;
    sub.buffer = null;
    this.hub.removeSubscription(sub);
    const session = sub.session;
    if (sub.flags.presence) {
      this.presenceManager
        .removePresence(sub.channel, session.id, session.user)
        .catch((error: unknown) =>
          this.logger.warn({ channel: sub.channel, error: String(error) }, 'presence remove failed'),
        );
    }
    if (!wasSubscribed) return;
    if (sub.flags.joinLeave) this.publishJoinLeave(sub, false);
    if (info !== undefined) this.emitEvent('onUnsubscribe', session, sub.channel, info);
  }

  addPresence(sub: Subscription): Promise<void> {
    return this.presenceManager
      .addPresence(sub.channel, sub.session.id, sub.info(), this.options.presenceTtlMs)
      .catch((error: unknown) => {
        this.logger.warn({ channel: sub.channel, error: String(error) }, 'presence update failed');
      });
  }

  publishJoinLeave(sub: Subscription, join: boolean): void {
    const operation = join
      ? this.broker.publishJoin(sub.channel, sub.info())
      : this.broker.publishLeave(sub.channel, sub.info());
    operation.catch((error: unknown) =>
      this.logger.warn({ channel: sub.channel, error: String(error) }, 'join/leave publish failed'),
    );
  }

  emitEvent<K extends EventHookName>(name: K, ...args: Parameters<NonNullable<RealtimeHooks[K]>>): void {
    const hook = this.hooks[name] as ((...a: unknown[]) => void) | undefined;
    if (hook === undefined) return;
    try {
      hook(...args);
    } catch (error) {
      this.logger.error({ hook: name, error: String(error) }, 'event hook failed');
    }
  }

  async publishRaw(request: ChannelPublication): Promise<StreamPosition | undefined> {
    const history = request.skipHistory ? undefined : request.options.history;
    return this.broker.publish({
      channel: request.channel,
      data: request.data,
      ...(request.info !== undefined ? { info: request.info } : {}),
      ...(request.tags !== undefined ? { tags: request.tags } : {}),
      ...(request.delta === true || request.options.deltaPublish ? { delta: true } : {}),
      ...(history !== undefined ? { history } : {}),
      ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}),
    });
  }

  async readHistory(
    channel: string,
    options: ResolvedChannelOptions,
    filter: HistoryFilter,
  ): Promise<HistoryResult> {
    if (options.history === undefined) throw new ClientError(ErrorCode.notAvailable);
    if (filter.reverse && filter.since !== undefined && filter.since.offset === 0) {
      throw new ClientError(ErrorCode.badRequest);
    }
    const result = await this.broker.history({
      channel,
      limit: filter.limit,
      reverse: filter.reverse,
      history: options.history,
      ...(filter.since !== undefined ? { since: filter.since } : {}),
    });
    if (
      filter.since !== undefined &&
      filter.since.epoch !== '' &&
      filter.since.epoch !== result.position.epoch
    ) {
      throw new ClientError(ErrorCode.unrecoverablePosition);
    }
    return result;
  }

  /** Namespace options of a channel for server-side calls; 107 for bad names, 102 for unknown ones. */
  channelOptions(channel: unknown): ResolvedChannelOptions {
    if (typeof channel !== 'string' || channel === '') throw new ClientError(ErrorCode.badRequest);
    if (channel.length > this.registry.rules.maxLength) throw new ClientError(ErrorCode.badRequest);
    const resolved = this.registry.resolve(channel);
    if (resolved === undefined) throw new ClientError(ErrorCode.unknownChannel);
    return resolved.options;
  }
}
