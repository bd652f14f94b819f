import { BrokerError } from '../broker/errors.ts';
import type { Broker, ClientInfo, Publication } from '../broker/types.ts';
import { encodeJoinPush, encodeLeavePush, encodePublicationPush } from '../protocol/codec.ts';
import { encodeProtobufPublicationPush, jsonReplyToProtobuf } from '../protocol/protobuf.ts';
import { DeltaPushes } from './delta.ts';
import type { ClientHandle } from './hooks.ts';
import { SharedPush } from './shared-push.ts';
import { type Subscription, SubscriptionState } from './subscription.ts';

/** Verdict of the positioning check for one live publication (docs/protocol.md "Positioning"). */
export enum PositionVerdict {
  Deliver = 0,
  Duplicate = 1,
  Gap = 2,
}

/** Checks a live publication against the subscriber's last position and advances it when delivered. */
export function advancePosition(
  sub: Subscription,
  publication: Publication,
  epoch: string | undefined,
): PositionVerdict {
  const offset = publication.offset;
  if (!sub.flags.positioned || offset === undefined || offset === 0) return PositionVerdict.Deliver;
  if (epoch !== undefined && epoch !== '' && sub.epoch !== '' && epoch !== sub.epoch)
    return PositionVerdict.Gap;
  if (offset <= sub.offset) return PositionVerdict.Duplicate;
  if (offset > sub.offset + 1) return PositionVerdict.Gap;
  sub.offset = offset;
  if (sub.epoch === '' && epoch) sub.epoch = epoch;
  return PositionVerdict.Deliver;
}

interface ChannelEntry {
  readonly subscribers: Set<Subscription>;
  brokerSubscribed: boolean;
  /** In-flight broker subscribe/unsubscribe; operations on one channel never overlap. */
  pending: Promise<boolean> | null;
  lastPublicationAt: number;
  positioned: number;
  /** Why the last broker operation failed (the cause of the subscribe error a client gets). */
  lastError?: unknown;
  /** Data of the last publication delivered on the channel: the base of the next fossil delta. */
  previousData?: string;
}

/**
 * The node's local registry: which sessions are subscribed to which channel, connected clients by id and
 * user, and the broker subscription of each channel (subscribed on the first local subscriber, unsubscribed
 * after the last one left, docs/protocol.md "Cluster"). Fan-out encodes each push once per channel and hands
 * the same bytes to every session.
 */
export class Hub {
  readonly clients = new Map<string, ClientHandle>();
  readonly users = new Map<string, Set<ClientHandle>>();
  private readonly channels = new Map<string, ChannelEntry>();
  private subscriptionCount = 0;

  constructor(
    private readonly broker: Broker,
    private readonly onBrokerError: (error: unknown, channel: string) => void,
  ) {}

  get numClients(): number {
    return this.clients.size;
  }

  get numUsers(): number {
    return this.users.size;
  }

  get numChannels(): number {
    return this.channels.size;
  }

  get numSubscriptions(): number {
    return this.subscriptionCount;
  }

  addClient(session: ClientHandle): void {
    this.clients.set(session.id, session);
    let sessions = this.users.get(session.user);
    if (sessions === undefined) {
      sessions = new Set();
      this.users.set(session.user, sessions);
    }
    sessions.add(session);
  }

  removeClient(session: ClientHandle): void {
    if (this.clients.get(session.id) === session) this.clients.delete(session.id);
    const sessions = this.users.get(session.user);
    if (sessions === undefined) return;
    sessions.delete(session);
    if (sessions.size === 0) this.users.delete(session.user);
  }

  userSessions(user: string): ReadonlySet<ClientHandle> | undefined {
    return this.users.get(user);
  }

  /** Registers the subscription and resolves once the broker delivers the channel to this node. */
  async addSubscription(sub: Subscription): Promise<void> {
    let entry = this.channels.get(sub.channel);
    if (entry === undefined) {
      entry = {
        subscribers: new Set(),
        brokerSubscribed: false,
        pending: null,
        lastPublicationAt: 0,
        positioned: 0,
      };
      this.channels.set(sub.channel, entry);
    }
    entry.subscribers.add(sub);
    this.subscriptionCount += 1;
    if (sub.flags.positioned) entry.positioned += 1;
    // Bounded: each round either finds the channel subscribed with nothing in flight, or waits for one broker call
    // (its own subscribe, or the operation already in flight). `brokerSubscribed` alone is not enough: it stays true
    // while the unsubscribe started when the last subscriber left is in flight, and a subscriber that took it for
    // done would stay registered on a channel the broker then drops, never to get another publication (a client
    // told to resubscribe after a lost publication, 2500, comes back within a millisecond, docs/protocol.md
    // "Positioning").
    for (let attempt = 0; attempt < 8; attempt++) {
      if (entry.brokerSubscribed && entry.pending === null) break;
      const ownOperation = entry.pending === null;
      if (ownOperation) this.startBrokerOperation(sub.channel, entry, true);
      const succeeded = await entry.pending;
      if (sub.state === SubscriptionState.Removed) return;
      if (ownOperation && !succeeded) break;
    }
    // The broker refused or could not be reached: the client gets a temporary error and subscribes again later.
    if (!entry.brokerSubscribed) {
      throw new BrokerError('broker_unavailable', `could not subscribe to channel ${sub.channel}`, {
        cause: entry.lastError,
      });
    }
  }

  removeSubscription(sub: Subscription): void {
    const entry = this.channels.get(sub.channel);
    if (entry === undefined || !entry.subscribers.delete(sub)) return;
    this.subscriptionCount -= 1;
    if (sub.flags.positioned) entry.positioned -= 1;
    this.reconcile(sub.channel, entry);
  }

  /** Channels with at least one local subscriber, and how many. */
  channelCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [channel, entry] of this.channels) {
      if (entry.subscribers.size > 0) counts.set(channel, entry.subscribers.size);
    }
    return counts;
  }

  subscribers(channel: string): ReadonlySet<Subscription> | undefined {
    return this.channels.get(channel)?.subscribers;
  }

  /**
   * Channels with positioned subscribers and no publication for `quietMs` (periodic position check,
   * docs/protocol.md "Positioning").
   */
  quietPositionedChannels(now: number, quietMs: number): string[] {
    const result: string[] = [];
    for (const [channel, entry] of this.channels) {
      if (entry.positioned > 0 && now - entry.lastPublicationAt >= quietMs) result.push(channel);
    }
    return result;
  }

  lastPublicationAt(channel: string): number {
    return this.channels.get(channel)?.lastPublicationAt ?? 0;
  }

  markChecked(channel: string, now: number): void {
    const entry = this.channels.get(channel);
    if (entry !== undefined) entry.lastPublicationAt = now;
  }

  /**
   * A subscriber recovered `data` as the latest document of a channel this node has not delivered anything on yet
   * (it just subscribed it at the broker): the next publication can then go as a delta against it. Safe whatever
   * arrives meanwhile, since a delta is only sent to a subscriber holding exactly its base (delta.ts).
   */
  seedDeltaBase(channel: string, data: string): void {
    const entry = this.channels.get(channel);
    if (entry !== undefined && entry.previousData === undefined) entry.previousData = data;
  }

  broadcastPublication(channel: string, publication: Publication, epoch: string | undefined): void {
    const entry = this.channels.get(channel);
    if (entry === undefined) return;
    entry.lastPublicationAt = Date.now();
    // Encoded and framed once per publication per channel and format: most subscribers get exactly this push in a
    // turn, and then the session writes the prebuilt WebSocket frame as is (see preframed.ts).
    let frame: SharedPush | undefined;
    let deltas: DeltaPushes | undefined;
    const previous = entry.previousData;
    entry.previousData = publication.data;
    for (const sub of entry.subscribers) {
      if (sub.state !== SubscriptionState.Subscribed) {
        if (sub.state === SubscriptionState.Subscribing) sub.bufferPublication(publication, epoch);
        continue;
      }
      const verdict = advancePosition(sub, publication, epoch);
      if (verdict === PositionVerdict.Duplicate) continue;
      if (verdict === PositionVerdict.Gap) {
        sub.session.onInsufficientState(sub);
        continue;
      }
      if (sub.delta) {
        deltas ??= new DeltaPushes(channel, publication, previous);
        // A delta only against exactly the document this subscriber holds (delta.ts).
        const asDelta =
          publication.delta === true && sub.deltaBase !== undefined && sub.deltaBase === previous;
        sub.deltaBase = publication.data;
        sub.session.enqueue(asDelta ? deltas.delta() : deltas.full());
        continue;
      }
      frame ??= new SharedPush(
        () => encodePublicationPush(channel, publication),
        () => encodeProtobufPublicationPush(channel, publication),
      );
      sub.session.enqueue(frame);
    }
  }

  broadcastJoinLeave(channel: string, info: ClientInfo, join: boolean): void {
    const entry = this.channels.get(channel);
    if (entry === undefined) return;
    let frame: SharedPush | undefined;
    for (const sub of entry.subscribers) {
      if (sub.state !== SubscriptionState.Subscribed || !sub.flags.pushJoinLeave) continue;
      if (frame === undefined) {
        const json = join ? encodeJoinPush(channel, info) : encodeLeavePush(channel, info);
        frame = new SharedPush(
          () => json,
          () => jsonReplyToProtobuf(json),
        );
      }
      sub.session.enqueue(frame);
    }
  }

  private startBrokerOperation(channel: string, entry: ChannelEntry, subscribe: boolean): void {
    const operation = subscribe ? this.broker.subscribe([channel]) : this.broker.unsubscribe([channel]);
    const pending = operation.then(
      () => {
        entry.brokerSubscribed = subscribe;
        entry.lastError = undefined;
        return true;
      },
      (error: unknown) => {
        entry.lastError = error;
        this.onBrokerError(error, channel);
        return false;
      },
    );
    entry.pending = pending;
    void pending.then(() => {
      entry.pending = null;
      this.reconcile(channel, entry);
    });
  }

  /** Brings the broker subscription in line with the local subscribers once no operation is in flight. */
  private reconcile(channel: string, entry: ChannelEntry): void {
    if (entry.pending !== null) return;
    if (entry.subscribers.size === 0) {
      if (entry.brokerSubscribed) this.startBrokerOperation(channel, entry, false);
      else if (this.channels.get(channel) === entry) this.channels.delete(channel);
    }
  }
}
