import { newEpoch } from './epoch.ts';
import type { HistoryRequest, HistoryRetention, Publication, StreamPosition } from './types.ts';

/** Expiry for a TTL where 0 (or less) means "never", as Centrifugo treats an unset `history_meta_ttl`. */
function expiryAt(now: number, ttlMs: number): number {
  return ttlMs > 0 ? now + ttlMs : Number.POSITIVE_INFINITY;
}

/**
 * One channel's stream (docs/protocol.md "Streams"): gapless offsets from 1, a random epoch, a sliding window
 * of the newest `size` publications. The window (data) expires `ttlMs` after the last publish; the epoch and
 * top offset (meta) expire `metaTtlMs` after the last publish or read, after which the channel starts over
 * with a new epoch.
 */
export class MemoryStream {
  readonly epoch = newEpoch();
  top = 0;
  /** Contiguous: `items[i].offset === top - items.length + 1 + i`. */
  private items: Publication[] = [];
  private dataExpiresAt = Number.POSITIVE_INFINITY;
  metaExpiresAt = Number.POSITIVE_INFINITY;

  get position(): StreamPosition {
    return { offset: this.top, epoch: this.epoch };
  }

  /** Drops the window once its TTL passed without a publish (meta survives; offsets keep counting). */
  expireData(now: number): void {
    if (this.dataExpiresAt <= now) {
      this.items = [];
      this.dataExpiresAt = Number.POSITIVE_INFINITY;
    }
  }

  append(publication: Publication, retention: HistoryRetention, now: number): number {
    this.expireData(now);
    this.top += 1;
    publication.offset = this.top;
    this.items.push(publication);
    const excess = this.items.length - retention.size;
    if (excess > 0) this.items.splice(0, excess);
    // Every publish pushes the whole window's expiry forward (Centrifugo `history_ttl` semantics,
    // docs/protocol.md "Streams").
    this.dataExpiresAt = expiryAt(now, retention.ttlMs);
    this.touchMeta(retention, now);
    return this.top;
  }

  touchMeta(retention: HistoryRetention, now: number): void {
    this.metaExpiresAt = expiryAt(now, retention.metaTtlMs);
  }

  clear(): void {
    this.items = [];
  }

  /** Publications after `since` (exclusive), or before it newest first with `reverse`; limit -1 = all. */
  read(request: HistoryRequest): Publication[] {
    if (request.limit === 0 || this.items.length === 0) return [];
    const first = this.top - this.items.length + 1;
    const max = request.limit < 0 ? Number.POSITIVE_INFINITY : request.limit;
    if (request.reverse) {
      const before = request.since ? request.since.offset : this.top + 1;
      const end = Math.min(before - first, this.items.length); // exclusive index
      if (end <= 0) return [];
      const start = Math.max(0, end - max);
      return this.items.slice(start, end).reverse();
    }
    const after = request.since ? request.since.offset : 0;
    const start = Math.max(0, after + 1 - first);
    if (start >= this.items.length) return [];
    return this.items.slice(start, start + Math.min(max, this.items.length));
  }
}

/** Channel → stream with lazy expiry; `sweep` reclaims channels nobody touches any more. */
export class MemoryStreamStore {
  private readonly streams = new Map<string, MemoryStream>();

  /** The channel's live stream; a missing or meta-expired one is replaced by a fresh epoch at offset 0. */
  open(channel: string, now: number): MemoryStream {
    let stream = this.streams.get(channel);
    if (stream === undefined || stream.metaExpiresAt <= now) {
      stream = new MemoryStream();
      this.streams.set(channel, stream);
    } else {
      stream.expireData(now);
    }
    return stream;
  }

  /** Removes the retained publications but keeps epoch and top offset, so positions stay monotonic. */
  clear(channel: string): void {
    this.streams.get(channel)?.clear();
  }

  sweep(now: number): void {
    for (const [channel, stream] of this.streams) {
      if (stream.metaExpiresAt <= now) this.streams.delete(channel);
      else stream.expireData(now);
    }
  }

  get size(): number {
    return this.streams.size;
  }
}
