import type { ClientInfo, Publication } from '../broker/types.ts';
import type { ResolvedChannelOptions } from '../config/namespaces.ts';
import type { ClientSession } from './session.ts';

export enum SubscriptionState {
  /** Registered with the hub; live publications are buffered until the subscribe reply is written (§5.5). */
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

/** One connection's subscription to one channel; kept small, there may be hundreds of thousands. */
export class Subscription {
  state = SubscriptionState.Subscribing;
  buffer: BufferedPublication[] | null = [];
  bufferOverflow = false;
  /** Last offset delivered to the client and the stream epoch (positioning, §5.6). */
  offset = 0;
  epoch = '';
  /** Unix ms when the subscription token expires; 0 = never. */
  expireAt = 0;
  chanInfo: string | undefined;
  private clientInfo: ClientInfo | undefined;

  constructor(
    readonly session: ClientSession,
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
