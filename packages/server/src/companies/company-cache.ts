import type { Logger } from 'pino';
import type { Config } from '../config/schema.ts';
import { errorField, ThrottledWarnings } from '../logging/throttled-warnings.ts';
import type { Store } from '../storage/database.ts';
import { closeRedis, failFastRedis } from '../storage/redis-client.ts';
import { RedisSignalChannel, type SignalMessage } from '../storage/redis-signal-channel.ts';

/**
 * How a node tells the others that a company's cached rows changed, and hears theirs: the cluster's Redis
 * (packages/server/src/storage/redis-signal-channel.ts), whose `onSubscribed`/`onLost` are wired to the cache's
 * `subscribed`/`lost`.
 */
export interface CompanyChangeSignal {
  send(message: SignalMessage): Promise<void>;
  listen(handle: (message: SignalMessage) => void): Promise<void>;
  close(): Promise<void>;
}

export interface CompanyCacheOptions {
  /** Companies kept (LRU); 0 keeps none. */
  capacity: number;
  /** Longest an entry is used, in ms: the bound for a change no node announced (a CLI command without Redis). */
  ttlMs: number;
  /**
   * `single`: this process is the only node (SQLite), entries are usable at once. `signalled`: other nodes share the
   * store and announce their changes over `signal`; entries are usable only while its subscription is up. `off`:
   * other nodes may share the store and cannot tell this one (PostgreSQL without Redis): nothing is kept.
   */
  mode: 'single' | 'signalled' | 'off';
  signal?: CompanyChangeSignal;
  /**
   * `single` on SQLite: the store's count of commits by other processes (storage/database.ts `othersCommits`). When it
   * moved, a CLI command may have changed any company behind this node's back, so everything kept is dropped.
   */
  othersCommits?: () => number;
  /** Told when an announcement to the other nodes failed (they read the store while their own link is down). */
  onSendFailed?: (err: unknown) => void;
  clock?: () => number;
}

interface Entry {
  value: unknown;
  readAt: number;
}

/**
 * A per-node cache of what the SDK's requests, a conversation's creation and every webhook event read about a
 * company — its row, its default digital employee, its digital employees, its enabled webhook endpoints
 * (packages/server/src/webhooks/outbox.ts), whether it has a ready knowledge source
 * (packages/server/src/knowledge/knowledge.service.ts) — so a burst of visitors does not read the same rows from the
 * store thousands of times (docs/operations.md "Capacity model").
 *
 * Correctness rules, in order:
 * - Everything cached about a company is dropped together (`invalidate`), by the services that change it, after
 *   their change committed: the next read on this node goes to the store.
 * - A read that started before an invalidation does not put its (possibly old) answer in the cache: every
 *   invalidation moves `epoch`, and an answer is kept only if `epoch` did not move while it was read.
 * - Other nodes hear the invalidation over Redis PUB/SUB; a node uses its entries only while its subscription is up,
 *   and starts from an empty cache each time it (re)subscribes, since PUB/SUB keeps nothing for a node that was away.
 * - Nothing absent is cached (a company or employee created on another node is found at once), and no entry is used
 *   past `ttlMs`.
 * - On SQLite, a commit by another process (a CLI command, which cannot announce) drops everything before the next
 *   read is answered (`othersCommits`).
 */
export class CompanyCache {
  /** Company id → its entries; a Map keeps insertion order, so the first key is the least recently used. */
  private readonly companies = new Map<string, Map<string, Entry>>();
  private readonly capacity: number;
  private epoch = 0;
  /** Whether entries may be used and kept now (see `mode`). */
  private live: boolean;
  private readonly clock: () => number;
  private othersCommitsSeen: number | undefined;
  /** Whether `othersCommits` was asked in this turn of the event loop (see `dropAfterOthersCommits`). */
  private othersCommitsAsked = false;
  /** Reads answered from memory and from the store, and changes heard from other nodes (for tests and the bench). */
  readonly stats = { hits: 0, misses: 0, heard: 0 };

  constructor(private readonly options: CompanyCacheOptions) {
    this.capacity = options.mode === 'off' ? 0 : options.capacity;
    this.live = options.mode === 'single';
    this.clock = options.clock ?? Date.now;
  }

  /** Starts hearing other nodes' changes (a serving node; a CLI command only announces). */
  async start(): Promise<void> {
    if (this.options.mode !== 'signalled' || !this.options.signal) return;
    await this.options.signal.listen((message) => {
      if (typeof message.company_id !== 'string') return;
      this.drop(message.company_id);
      this.stats.heard++;
    });
  }

  async stop(): Promise<void> {
    this.lost();
    await this.options.signal?.close();
  }

  /** The subscription to other nodes' changes is up (again): what was kept before may have missed some. */
  subscribed(): void {
    this.companies.clear();
    this.epoch++;
    this.live = this.options.mode === 'signalled';
  }

  /** The subscription is down: changes elsewhere would go unheard, so nothing is used or kept until it is back. */
  lost(): void {
    if (this.options.mode !== 'signalled') return;
    this.live = false;
    this.companies.clear();
    this.epoch++;
  }

  /** The value kept under `key` for the company, else `load()`'s (kept unless absent or invalidated meanwhile). */
  async get<T>(companyId: string, key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    this.dropAfterOthersCommits();
    if (this.live) {
      const entries = this.companies.get(companyId);
      const hit = entries?.get(key);
      if (entries && hit && this.clock() - hit.readAt < this.options.ttlMs) {
        // Moved to the young end: the least recently used company is the one dropped when the cache is full.
        this.companies.delete(companyId);
        this.companies.set(companyId, entries);
        this.stats.hits++;
        return hit.value as T;
      }
    }
    this.stats.misses++;
    const epoch = this.epoch;
    const readAt = this.clock();
    const value = await load();
    if (value !== undefined && this.live && epoch === this.epoch && this.capacity > 0) {
      let entries = this.companies.get(companyId);
      if (!entries) {
        entries = new Map();
        this.companies.set(companyId, entries);
        if (this.companies.size > this.capacity) this.companies.delete(this.companies.keys().next().value!);
      }
      entries.set(key, { value, readAt });
    }
    return value;
  }

  /**
   * A company's row or one of its digital employees changed (committed): forgotten here at once, and announced to the
   * other nodes (awaited, so the change's answer is sent once they were told; a failure is reported, not thrown —
   * the change itself is done, and a node that cannot hear Redis uses no entries).
   */
  async invalidate(companyId: string): Promise<void> {
    this.drop(companyId);
    await this.options.signal?.send({ company_id: companyId }).catch((err: unknown) => {
      this.options.onSendFailed?.(err);
    });
  }

  /**
   * Forgets everything when another process committed to the store since the last look (see `othersCommits`).
   * Asked once per turn of the event loop (the pragma costs about 11 µs, and a creation reads four entries): the
   * answer is forgotten in the turn's check phase, before the next poll reads new requests, so a request always
   * gets an answer asked after it arrived — after any CLI commit that was done before it was sent.
   */
  private dropAfterOthersCommits(): void {
    if (!this.options.othersCommits || this.othersCommitsAsked) return;
    this.othersCommitsAsked = true;
    setImmediate(() => {
      this.othersCommitsAsked = false;
    });
    const commits = this.options.othersCommits();
    if (commits === this.othersCommitsSeen) return;
    this.othersCommitsSeen = commits;
    this.companies.clear();
    this.epoch++;
  }

  private drop(companyId: string): void {
    this.epoch++;
    this.companies.delete(companyId);
  }
}

/**
 * The cache a node (or a CLI command) uses for the configured stores: SQLite is one process (`single`); PostgreSQL
 * with Redis announces changes on the cluster's Redis (`signalled`, a connection of its own made on first use, with
 * the outage settings of every Redis client: packages/server/src/storage/redis-client.ts); PostgreSQL without Redis
 * keeps nothing, since other nodes could change a company unheard.
 */
export function createCompanyCache(
  config: Pick<Config, 'redisUrl' | 'companyCacheSize' | 'companyCacheTtlMs'> & {
    webchat: Pick<Config['webchat'], 'realtimeRedisPrefix'>;
  },
  store: Pick<Store, 'dialect' | 'othersCommits'>,
  logger: Pick<Logger, 'warn'>,
): CompanyCache {
  const sizes = { capacity: config.companyCacheSize, ttlMs: config.companyCacheTtlMs };
  if (!config.redisUrl) {
    if (store.dialect !== 'sqlite') return new CompanyCache({ ...sizes, mode: 'off' });
    return new CompanyCache({
      ...sizes,
      mode: 'single',
      ...(store.othersCommits ? { othersCommits: store.othersCommits } : {}),
    });
  }
  const { redis, connect } = failFastRedis(config.redisUrl);
  let cache: CompanyCache | undefined;
  const channel = new RedisSignalChannel(redis, {
    channel: `${config.webchat.realtimeRedisPrefix}:company-changes`,
    ready: connect,
    onSubscribed: () => cache?.subscribed(),
    onLost: () => cache?.lost(),
  });
  const warnings = new ThrottledWarnings(logger);
  cache = new CompanyCache({
    ...sizes,
    mode: 'signalled',
    signal: {
      send: (message) => channel.send(message),
      listen: (handle) => channel.listen(handle),
      close: async () => {
        await channel.close();
        await closeRedis(redis);
      },
    },
    onSendFailed: (err) =>
      warnings.warn(
        { err: errorField(err) },
        'could not tell the other nodes that a company changed (Redis); they read the store while Redis is away',
      ),
  });
  return cache;
}
