import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * Whose turn it is to reply in a conversation. One reply streams at a time per conversation, and user messages
 * are answered in the order they were stored. On one node the conversation engine's own per-conversation queue
 * already guarantees both (`LOCAL_REPLY_TURNS` does nothing). In a cluster a visitor's tabs may publish through
 * different nodes, so the line and the turn live in Redis (`RedisReplyTurns`).
 */
export interface ReplyTurns {
  /** Puts a stored user message in line for its reply; `position` is its place in the conversation. */
  enqueue(conversationId: string, messageId: string, position: number): Promise<void>;
  /**
   * Resolves once the messages ahead in line were answered and no other reply streams, holding the turn from then
   * on; rejects with `signal.reason` when the wait is aborted (handover, close, shutdown).
   */
  acquire(conversationId: string, messageId: string, signal: AbortSignal): Promise<void>;
  /** Ends the turn, or leaves the line if the turn never came. */
  release(conversationId: string, messageId: string): Promise<void>;
  /** Tells the other nodes to stop their reply in this conversation (handover, close). */
  interruptElsewhere(conversationId: string, reason: InterruptReason): Promise<void>;
  /** Calls `stop` for each interruption announced by another node, until `close`. */
  onInterrupt(stop: (conversationId: string, reason: InterruptReason) => void): Promise<void>;
  close(): Promise<void>;
}

export type InterruptReason = 'handover' | 'closed';
const INTERRUPT_REASONS: readonly string[] = ['handover', 'closed'];

export const LOCAL_REPLY_TURNS: ReplyTurns = {
  enqueue: async () => {},
  acquire: async () => {},
  release: async () => {},
  interruptElsewhere: async () => {},
  onInterrupt: async () => {},
  close: async () => {},
};

/**
 * KEYS[1] the line: a sorted set of "nodeId:messageId" by position; KEYS[2] the turn: the holder's token.
 * ARGV: our member, our token, the turn's lifetime (ms), and the prefix of the nodes' liveness keys. A member at the
 * head of the line whose node's liveness key is gone was left by a crashed node and is dropped; a live node's
 * members keep their place however long they wait. Returns 1 when the turn is ours, 0 to wait.
 */
const ACQUIRE = `
while true do
  local head = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if head == nil or head == ARGV[1] then break end
  local node = string.match(head, '^([^:]+):')
  if node ~= nil and redis.call('EXISTS', ARGV[4] .. node) == 0 then
    redis.call('ZREM', KEYS[1], head)
  else
    return 0
  end
end
if redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[3]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
`;

/** Deletes the turn only if we still hold it (it may have expired and passed to another node). */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export interface RedisReplyTurnsOptions {
  /** Key prefix shared by the nodes of one cluster. */
  prefix: string;
  /**
   * Longest a reply can hold the turn: the responder timeout ends every reply, so a turn older than this was left
   * by a crashed node and expires.
   */
  turnTtlMs: number;
  /**
   * How long a node counts as alive after its last heartbeat (sent every third of this); its places in line are
   * dropped once it stops. Default 10 s.
   */
  nodeTtlMs?: number;
  /** How often a waiting node looks again (only while another reply streams in the same conversation). */
  pollMs?: number;
  logger: Logger;
}

/**
 * The line and the turn of each conversation in Redis, shared by every node. Uncontended (the usual case), a reply
 * costs one MULTI (place in line, node liveness) when its message is stored, one script call to take the turn and
 * one to give it back; a node with places in line refreshes its liveness key every third of `nodeTtlMs`. Redis being
 * unreachable must not silence the digital employee: the calls then fail open with a warning, and the node falls
 * back to its local order (the realtime broker needs Redis too, so the cluster is degraded anyway).
 */
export class RedisReplyTurns implements ReplyTurns {
  /** Messages of this node still in a line (their member is `nodeId:messageId`). */
  private readonly inLine = new Set<string>();
  /** Per message replying on this node: the token of its turn. */
  private readonly tokens = new Map<string, string>();
  /** This node's id: names its members and liveness key; its own interruptions come back and are ignored. */
  private readonly node = randomBytes(8).toString('base64url');
  private readonly nodeTtlMs: number;
  private readonly heartbeat: NodeJS.Timeout;
  private subscriber?: Redis;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisReplyTurnsOptions,
  ) {
    this.nodeTtlMs = options.nodeTtlMs ?? 10_000;
    this.heartbeat = setInterval(() => void this.beat(), this.nodeTtlMs / 3);
    this.heartbeat.unref();
  }

  async interruptElsewhere(conversationId: string, reason: InterruptReason): Promise<void> {
    const message = JSON.stringify({ node: this.node, conversation_id: conversationId, reason });
    await this.failOpen('interrupt', () => this.redis.publish(this.interruptChannel, message));
  }

  async onInterrupt(stop: (conversationId: string, reason: InterruptReason) => void): Promise<void> {
    // A connection in subscriber mode can do nothing else: a duplicate of the command connection.
    const subscriber = this.redis.duplicate();
    subscriber.on('error', () => {});
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, raw: string) => {
      const event = parseInterrupt(raw);
      if (event && event.node !== this.node) stop(event.conversationId, event.reason);
    });
    await subscriber.subscribe(this.interruptChannel);
  }

  /** Stops the heartbeat and says this node is gone, so its places in line (if any are left) stop counting. */
  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    await this.failOpen('close', () => this.redis.del(this.nodeKey));
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
  }

  private get interruptChannel(): string {
    return `${this.options.prefix}reply-interrupts`;
  }

  async enqueue(conversationId: string, messageId: string, position: number): Promise<void> {
    this.inLine.add(messageId);
    const line = this.lineKey(conversationId);
    // The liveness key is written with the member, so a member never exists without it.
    await this.failOpen('enqueue', () =>
      this.redis
        .multi()
        .set(this.nodeKey, '1', 'PX', this.nodeTtlMs)
        .zadd(line, position, this.memberOf(messageId))
        .pexpire(line, this.options.turnTtlMs * 2)
        .exec(),
    );
  }

  async acquire(conversationId: string, messageId: string, signal: AbortSignal): Promise<void> {
    const token = randomBytes(12).toString('base64url');
    for (;;) {
      signal.throwIfAborted();
      const taken = await this.failOpen('acquire', () =>
        this.redis.eval(
          ACQUIRE,
          2,
          this.lineKey(conversationId),
          this.turnKey(conversationId),
          this.memberOf(messageId),
          token,
          this.options.turnTtlMs,
          `${this.options.prefix}reply-node:`,
        ),
      );
      if (taken === 1) {
        // The script took our member out of the line along with the turn.
        this.inLine.delete(messageId);
        this.tokens.set(messageId, token);
        return;
      }
      // Failing open, the member stays known so `release` still takes it out of the line: left there, it would
      // hold up the other nodes' replies in this conversation for as long as this node lives.
      if (taken === undefined) return;
      await sleep(this.options.pollMs ?? 25, undefined, { signal }).catch(() => signal.throwIfAborted());
    }
  }

  async release(conversationId: string, messageId: string): Promise<void> {
    const token = this.tokens.get(messageId);
    this.tokens.delete(messageId);
    if (token) {
      await this.failOpen('release', () => this.redis.eval(RELEASE, 1, this.turnKey(conversationId), token));
    }
    if (this.inLine.delete(messageId)) {
      await this.failOpen('release', () =>
        this.redis.zrem(this.lineKey(conversationId), this.memberOf(messageId)),
      );
    }
  }

  private memberOf(messageId: string): string {
    return `${this.node}:${messageId}`;
  }

  private get nodeKey(): string {
    return `${this.options.prefix}reply-node:${this.node}`;
  }

  /** Keeps this node's liveness key while it has places in line (an idle node writes nothing). */
  private async beat(): Promise<void> {
    if (this.inLine.size === 0) return;
    await this.failOpen('heartbeat', () => this.redis.set(this.nodeKey, '1', 'PX', this.nodeTtlMs));
  }

  private lineKey(conversationId: string): string {
    return `${this.options.prefix}reply-line:${conversationId}`;
  }

  private turnKey(conversationId: string): string {
    return `${this.options.prefix}reply-turn:${conversationId}`;
  }

  private async failOpen<T>(what: string, call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (err) {
      this.options.logger.warn(
        { err: { message: (err as Error).message }, what },
        'reply turns unavailable (Redis); replying in this node’s order',
      );
      return undefined;
    }
  }
}

function parseInterrupt(
  raw: string,
): { node: string; conversationId: string; reason: InterruptReason } | undefined {
  try {
    const event = JSON.parse(raw) as { node?: unknown; conversation_id?: unknown; reason?: unknown };
    if (typeof event.node !== 'string' || typeof event.conversation_id !== 'string') return undefined;
    if (typeof event.reason !== 'string' || !INTERRUPT_REASONS.includes(event.reason)) return undefined;
    return {
      node: event.node,
      conversationId: event.conversation_id,
      reason: event.reason as InterruptReason,
    };
  } catch {
    return undefined;
  }
}
