import type { Logger } from 'pino';
import { boundedText } from '../http/bounded-body.ts';
import type { ApiClient } from './api-clients.service.ts';
import { type ClientJwks, validJwkSet } from './client-keys.ts';
import { LruCache } from './lru-cache.ts';

/**
 * The outbound `fetch` (integrations/outbound-http.ts, handed over by the composition root): it applies the
 * outbound address policy (PARLEY_OUTBOUND_BLOCK_PRIVATE, PARLEY_OUTBOUND_ALLOW) to every address it connects to.
 */
export type JwksFetch = (url: string, init: RequestInit & { timeoutMs?: number }) => Promise<Response>;

/** Clients whose fetched key sets are remembered per node; older ones are fetched again when next used. */
const CACHE_ENTRIES = 1_000;
/** An unknown `kid` fetches the key set again at most this often per client, so assertions cannot drive fetches. */
export const REFETCH_INTERVAL_MS = 10_000;
/** A key set is small (≤ 10 keys); a larger answer is no key set. */
const MAX_JWKS_BYTES = 64 * 1024;
const FETCH_TIMEOUT_MS = 5_000;

interface CachedKeys {
  uri: string;
  keys: ClientJwks['keys'];
  fetchedAt: number;
}

/** The key set could not be had (fetch refused or failed, or an answer that is no JWK Set). */
export class KeySetUnavailableError extends Error {}

/**
 * The public keys of a `private_key_jwt` client (RFC 7523 §2.2): the JWK Set registered inline, or the one the
 * client publishes at its `jwks_uri` (RFC 7591 §2), fetched through the outbound policy and kept per node for
 * PARLEY_JWKS_URI_CACHE_SECONDS in a bounded cache. When an assertion names a `kid` the cached set lacks (the
 * client rotated its keys), the set is fetched again at once — at most every REFETCH_INTERVAL_MS per client. Should
 * a re-fetch fail, the keys already known keep working until the next try (a client's outage does not stop
 * assertions signed with its current keys).
 */
export class ClientKeySets {
  private readonly cache = new LruCache<string, CachedKeys>(CACHE_ENTRIES);
  private readonly inFlight = new Map<string, Promise<CachedKeys>>();

  constructor(
    private readonly fetchJwks: JwksFetch | undefined,
    private readonly cacheSeconds: number,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The client's keys as currently known (fetching a `jwks_uri` set when none is cached or it is too old). */
  async keysOf(client: ApiClient): Promise<ClientJwks['keys']> {
    if (!client.jwksUri) return client.jwks?.keys ?? [];
    const cached = this.cached(client);
    if (cached && this.clock() - cached.fetchedAt < this.cacheSeconds * 1000) return cached.keys;
    return (await this.fetchOrStale(client, cached)).keys;
  }

  /**
   * The client's keys fetched anew because an assertion named a key they lack; `undefined` when there is no
   * `jwks_uri` or the last fetch is too recent (the caller then refuses the assertion).
   */
  async refetched(client: ApiClient): Promise<ClientJwks['keys'] | undefined> {
    if (!client.jwksUri) return undefined;
    const cached = this.cached(client);
    if (cached && this.clock() - cached.fetchedAt < REFETCH_INTERVAL_MS) return undefined;
    return (await this.fetchOrStale(client, cached)).keys;
  }

  private cached(client: ApiClient): CachedKeys | undefined {
    const entry = this.cache.get(client.clientId);
    return entry?.uri === client.jwksUri ? entry : undefined;
  }

  private async fetchOrStale(client: ApiClient, stale: CachedKeys | undefined): Promise<CachedKeys> {
    try {
      return await this.fetchOnce(client.clientId, client.jwksUri!);
    } catch (err) {
      this.logger.warn(
        { client_id: client.clientId, err: { message: (err as Error).message } },
        'fetching a client jwks_uri failed',
      );
      if (!stale) throw new KeySetUnavailableError((err as Error).message);
      // Try again no sooner than a re-fetch would: the stale keys stand in meanwhile.
      const kept = { ...stale, fetchedAt: this.clock() };
      this.cache.set(client.clientId, kept);
      return kept;
    }
  }

  /** One fetch per client at a time: concurrent assertions share it. */
  private fetchOnce(clientId: string, uri: string): Promise<CachedKeys> {
    const running = this.inFlight.get(clientId);
    if (running) return running;
    const fetching = this.download(uri)
      .then((keys) => {
        const entry = { uri, keys, fetchedAt: this.clock() };
        this.cache.set(clientId, entry);
        return entry;
      })
      .finally(() => this.inFlight.delete(clientId));
    this.inFlight.set(clientId, fetching);
    return fetching;
  }

  private async download(uri: string): Promise<ClientJwks['keys']> {
    if (!this.fetchJwks) throw new Error('no outbound client in this process');
    const response = await this.fetchJwks(uri, {
      headers: { accept: 'application/jwk-set+json, application/json' },
      redirect: 'error',
      timeoutMs: FETCH_TIMEOUT_MS,
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {});
      throw new Error(`jwks_uri answered ${response.status}`);
    }
    const text = await jwksText(response);
    try {
      return validJwkSet(JSON.parse(text)).keys;
    } catch {
      throw new Error('jwks_uri did not answer a JWK Set of public keys');
    }
  }
}

async function jwksText(response: Response): Promise<string> {
  const text = await boundedText(response, MAX_JWKS_BYTES);
  if (text === undefined) throw new Error('jwks_uri answer too large');
  return text;
}
