import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { errorField, ThrottledWarnings } from '../logging/throttled-warnings.ts';
import type { SignalMessage } from '../storage/redis-signal-channel.ts';
import type { OAuthTables } from './oauth.tables.ts';

/**
 * How often each node reads revocations made elsewhere: the "within 1 s on every node" promise (RFC 7009 §2)
 * without a broker, and the fallback with one (a push lost while Redis is away).
 */
export const REVOCATION_POLL_MS = 400;

/**
 * How revocations reach the other nodes at once: the cluster's Redis
 * (packages/server/src/storage/redis-signal-channel.ts).
 */
export interface RevocationPush {
  send(message: SignalMessage): Promise<void>;
  listen(handle: (message: SignalMessage) => void): Promise<void>;
  close(): Promise<void>;
}
/** Rows are read again this far back, so a revocation committed by a node whose clock is behind is not missed. */
const CLOCK_SKEW_MS = 5_000;
/** Expired rows are deleted about once a minute (by whichever node gets there; deleting twice is harmless). */
const PURGE_EVERY_MS = 60_000;

/**
 * Access tokens revoked before they expire, by `jti`. The store (`oauth_revoked_tokens`) is the truth shared by every
 * node; each node keeps the unexpired `jti`s in memory, loads them all at start and then reads what is new every
 * REVOCATION_POLL_MS, so the bearer check stays a map lookup and a revocation made on any node is refused on every
 * node within one poll (well under a second). The node that revokes refuses the token at once, and — with a
 * broker (`REDIS_URL`) — tells the others over PUB/SUB once the row is committed, so they refuse it within a
 * Redis round trip; the poll stays, for a push lost while Redis is away.
 */
export class RevocationList {
  /** jti → exp (seconds). */
  private readonly revoked = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private lastSeen = '';
  private polls = 0;
  private polling?: Promise<void>;

  private readonly warnings: ThrottledWarnings;

  constructor(
    private readonly db: Kysely<OAuthTables>,
    private readonly logger: Logger,
    private readonly push?: RevocationPush,
    /** How often to read the store (default REVOCATION_POLL_MS; `oauth.revocationPollMs`). */
    private readonly pollMs = REVOCATION_POLL_MS,
  ) {
    this.warnings = new ThrottledWarnings(logger);
  }

  isRevoked(jti: string): boolean {
    return this.revoked.has(jti);
  }

  /** Records a revocation (idempotent); the token is refused on this node from now on, elsewhere within a poll. */
  async revoke(token: { jti: string; exp: number; companyId: string; clientId: string }): Promise<void> {
    await this.db
      .insertInto('oauth_revoked_tokens')
      .values({
        jti: token.jti,
        company_id: token.companyId,
        client_id: token.clientId,
        expires_at: new Date(token.exp * 1000).toISOString(),
        revoked_at: new Date().toISOString(),
      })
      .onConflict((oc) => oc.column('jti').doNothing())
      .execute();
    this.revoked.set(token.jti, token.exp);
    await this.push
      ?.send({ jti: token.jti, exp: token.exp })
      .catch((err: unknown) =>
        this.warnings.warn(
          { err: errorField(err) },
          'could not push a revocation to the other nodes (Redis); they read it on their next poll',
        ),
      );
  }

  /** Loads every unexpired revocation, then keeps reading new ones. Servers call this once. */
  async start(): Promise<void> {
    await this.push?.listen((message) => this.heard(message));
    await this.poll();
    this.timer ??= setInterval(() => {
      this.polling ??= this.poll()
        .catch((err: Error) =>
          this.logger.warn({ err: { message: err.message } }, 'reading revocations failed'),
        )
        .finally(() => {
          this.polling = undefined;
        });
    }, this.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.polling;
    await this.push?.close();
  }

  /** A revocation another node pushed (its row is committed; the poll would find it too). */
  private heard(message: SignalMessage): void {
    const { jti, exp } = message;
    if (typeof jti !== 'string' || typeof exp !== 'number' || exp * 1000 < Date.now()) return;
    this.revoked.set(jti, exp);
  }

  /** Reads revocations recorded since the last read (with a margin for clock skew between nodes). */
  async poll(): Promise<void> {
    const startedAt = Date.now();
    const since =
      this.lastSeen === '' ? '' : new Date(Date.parse(this.lastSeen) - CLOCK_SKEW_MS).toISOString();
    const nowIso = new Date(startedAt).toISOString();
    const rows = await this.db
      .selectFrom('oauth_revoked_tokens')
      .select(['jti', 'expires_at', 'revoked_at'])
      .where('revoked_at', '>=', since)
      .where('expires_at', '>', nowIso)
      .execute();
    for (const row of rows) {
      this.revoked.set(row.jti, Date.parse(row.expires_at) / 1000);
      if (row.revoked_at > this.lastSeen) this.lastSeen = row.revoked_at;
    }
    if (this.lastSeen === '') this.lastSeen = nowIso;
    if (++this.polls % Math.max(1, Math.ceil(PURGE_EVERY_MS / this.pollMs)) === 0)
      await this.purge(startedAt);
  }

  private async purge(at: number): Promise<void> {
    const nowSeconds = at / 1000;
    for (const [jti, exp] of this.revoked) if (exp < nowSeconds) this.revoked.delete(jti);
    const cutoff = new Date(at - 60_000).toISOString();
    await this.db.deleteFrom('oauth_revoked_tokens').where('expires_at', '<', cutoff).execute();
    await this.db.deleteFrom('oauth_used_jtis').where('expires_at', '<', cutoff).execute();
  }
}
