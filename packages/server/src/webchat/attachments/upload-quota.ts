import { Transform, type TransformCallback } from 'node:stream';
import type { AbuseLimits, LimitCheck } from '../abuse-limits.ts';

const HOUR_MS = 60 * 60 * 1000;

/** Bytes counted against the quotas in one go while an upload streams: one limiter call per batch. */
const CHARGE_BATCH_BYTES = 256 * 1024;

/** Room for the multipart framing around the file when an announced `Content-Length` is compared with a quota. */
const FRAMING_BYTES = 16 * 1024;

export interface UploadQuotaLimits {
  bytesPerHourPerSession: number;
  bytesPerHourPerIp: number;
}

/**
 * The bytes a visitor may upload per hour, per session and per client address (docs/config.md "Webchat"), counted
 * on the shared rate limiter — in Redis with REDIS_URL, so every node counts against the same quota. A request is
 * refused (429 `rate_limited`, `Retry-After` until the quota's hour ends) before a byte is read when a quota is used
 * up or its announced length cannot fit; otherwise the file's bytes are counted while they stream, and the upload
 * is refused (and nothing of it kept) as soon as a quota is passed. Bytes that arrived count, even for an upload
 * that is then refused for another reason: they were received all the same.
 */
export class UploadQuota {
  constructor(
    private readonly limits: AbuseLimits,
    private readonly quota: UploadQuotaLimits,
  ) {}

  /** Refuses up front: a quota with nothing left, or an announced body that cannot fit in what is left. */
  async admit(sessionId: string, ip: string, announcedBytes: number | undefined): Promise<void> {
    const need =
      announcedBytes !== undefined && announcedBytes > FRAMING_BYTES ? announcedBytes - FRAMING_BYTES : 1;
    await this.limits.enforceRoom(this.checks(sessionId, ip), 'upload bytes this hour', need);
  }

  /** A pass-through that counts the bytes flowing through it and fails with 429 once a quota is passed. */
  meter(sessionId: string, ip: string): Transform {
    return new QuotaMeter(this.limits, this.checks(sessionId, ip));
  }

  private checks(sessionId: string, ip: string): LimitCheck[] {
    return [
      { key: `upl:bytes:s:${sessionId}`, limit: this.quota.bytesPerHourPerSession, windowMs: HOUR_MS },
      { key: `upl:bytes:ip:${ip}`, limit: this.quota.bytesPerHourPerIp, windowMs: HOUR_MS },
    ];
  }
}

/** Counts in batches of CHARGE_BATCH_BYTES and at the end; a batch waits for its count before flowing on. */
class QuotaMeter extends Transform {
  private uncounted = 0;

  constructor(
    private readonly limits: AbuseLimits,
    private readonly checks: LimitCheck[],
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.uncounted += chunk.length;
    if (this.uncounted < CHARGE_BATCH_BYTES) done(null, chunk);
    else this.charge().then(() => done(null, chunk), done);
  }

  override _flush(done: TransformCallback): void {
    this.charge().then(() => done(), done);
  }

  private async charge(): Promise<void> {
    const bytes = this.uncounted;
    this.uncounted = 0;
    if (bytes > 0) await this.limits.enforce(this.checks, 'upload bytes this hour', bytes);
  }
}
