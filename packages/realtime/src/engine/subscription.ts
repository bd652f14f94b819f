import type { ClientInfo, Publication } from '../broker/types.ts';
import type { ClientHandle } from './hooks.ts';
import type { ResolvedChannelOptions } from './namespaces.ts';
import type { SharedPush } from './shared-push.ts';

export enum SubscriptionState {
  /**
   * Registered with the hub; live publications are buffered until the subscribe reply is written
   * (docs/protocol.md "Race-free subscribe").
   */
  Subscribing = 0,
  Subscribed = 1,
  Removed = 2,
}

/** Publications buffered while subscribing, bounded so a hot channel cannot grow memory without limit. */
export const MAX_SUBSCRIBE_BUFFER = 4096;

export interface BufferedPublication {
  publication: Publication;
  epoch: string | undefined;
}

/** Effective options of one subscription (namespace options plus token overrides and client requests). */
export interface SubscriptionFlags {
  presence: boolean;
  joinLeave: boolean;
  pushJoinLeave: boolean;
  positioned: boolean;
  recoverable: boolean;
}

/**
 * The connection a subscription belongs to, as the hub, the position check and event hooks reach it (a
 * `ClientSession`; declared here so this module does not depend on the session).
 */
export interface SubscriberConnection extends ClientHandle {
  /** Queues a push for this connection (written with the rest of this event-loop turn's output). */
  enqueue(frame: string | SharedPush): void;
  /** A publication was lost for this subscriber: resubscribe (2500) or reconnect (3010). */
  onInsufficientState(sub: Subscription): void;
}

/** One connection's subscription to one channel; kept small, there may be hundreds of thousands. */
export class Subscription {
  state = SubscriptionState.Subscribing;
  buffer: BufferedPublication[] | null = [];
  bufferOverflow = false;
  /** Last offset delivered to the client and the stream epoch (docs/protocol.md "Positioning"). */
  offset = 0;
  epoch = '';
  /** Unix ms when the subscription token expires; 0 = never. */
  expireAt = 0;
  chanInfo: string | undefined;
  /** Fossil deltas were negotiated (docs/protocol.md "Delta compression"). */
  delta = false;
  /** With `delta`: the document the client holds, i.e. the data of the last publication sent to it. */
  deltaBase: string | undefined;
  /** A sub_refresh proxy call is under way. */
  refreshing = false;
  private clientInfo: ClientInfo | undefined;

  constructor(
    readonly session: SubscriberConnection,
    readonly channel: string,
    readonly options: ResolvedChannelOptions,
    readonly flags: SubscriptionFlags,
    readonly serverSide: boolean,
  ) {}

  /** ClientInfo used for presence, join/leave and publications from this client in this channel. */
  info(): ClientInfo {
    if (this.clientInfo === undefined) {
      const info: ClientInfo = { user: this.session.user, client: this.session.id };
      if (this.session.connInfo !== undefined) info.connInfo = this.session.connInfo;
      if (this.chanInfo !== undefined) info.chanInfo = this.chanInfo;
      this.clientInfo = info;
    }
    return this.clientInfo;
  }

  /** Forget the cached ClientInfo after connection or channel info changed (refresh, sub_refresh). */
  resetInfo(): void {
    this.clientInfo = undefined;
  }

  bufferPublication(publication: Publication, epoch: string | undefined): void {
    if (this.buffer === null) return;
    if (this.buffer.length >= MAX_SUBSCRIBE_BUFFER) {
      this.bufferOverflow = true;
      this.buffer = null;
      return;
    }
    this.buffer.push({ publication, epoch });
  }
}
