import type { Redis } from 'ioredis';

/**
 * A second sign of life for the reply jobs a node runs, outside the store. The lease in the store (reply-queue.ts)
 * says who owns a job, but it cannot be renewed while the store is away: after a 30 s database outage every lease
 * has lapsed, although the nodes that hold them are alive and still streaming their replies. A node that finds a
 * lapsed lease therefore takes the job over only when no heartbeat of it is found either. The running node beats in
 * the broker (Redis) every third of a lease, each beat lasting one lease, so a dead node's jobs are taken over as
 * soon as before; a broker that cannot be reached counts as "no heartbeat", and the store's lease decides alone.
 */
export interface ReplyHeartbeats {
  /** This node runs these jobs (user message ids) now. */
  beat(messageIds: readonly string[]): Promise<void>;
  /** Whether a node beat for this job within the last lease; false when unknown (no broker, or unreachable). */
  beating(messageId: string): Promise<boolean>;
}

/** One node alone (no Redis): nobody else could take its jobs over, so the lease in the store is enough. */
export const NO_HEARTBEATS: ReplyHeartbeats = {
  beat: async () => {},
  beating: async () => false,
};

/** Heartbeats as Redis keys that expire after one lease (`SET … PX`), shared by the nodes of a cluster (same prefix). */
export class RedisReplyHeartbeats implements ReplyHeartbeats {
  constructor(
    private readonly redis: Redis,
    private readonly options: { prefix: string; leaseMs: number },
  ) {}

  async beat(messageIds: readonly string[]): Promise<void> {
    if (messageIds.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const id of messageIds) pipeline.set(this.key(id), '1', 'PX', this.options.leaseMs);
    const results = (await pipeline.exec()) ?? [];
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];
  }

  async beating(messageId: string): Promise<boolean> {
    try {
      return (await this.redis.exists(this.key(messageId))) === 1;
    } catch {
      return false;
    }
  }

  private key(messageId: string): string {
    return `${this.options.prefix}reply-heartbeat:${messageId}`;
  }
}
