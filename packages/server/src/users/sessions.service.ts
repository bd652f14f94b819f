import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.ts';
import type { PortalUser, UsersService } from './users.service.ts';

export interface SessionPolicy {
  ttlSeconds: number;
  idleSeconds: number;
}

export interface StartedSession {
  /** The secret cookie value: 256 random bits. Only its SHA-256 is stored. */
  token: string;
  expiresAt: string;
}

export interface ActiveSession {
  user: PortalUser;
  expiresAt: string;
}

const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');
const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Server-side portal sessions (OWASP Session Management Cheat Sheet): a random id in an httpOnly cookie, its hash
 * in the database, an absolute and an idle expiry, and deletion on sign-out. Expired rows are removed lazily.
 */
export class SessionsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly users: UsersService,
    private readonly policy: SessionPolicy,
    /** Milliseconds since the epoch; tests move it instead of waiting for a session to expire. */
    private readonly clock: () => number = Date.now,
  ) {}

  async start(user: PortalUser): Promise<StartedSession> {
    const token = randomBytes(32).toString('base64url');
    const createdMs = this.clock();
    const expiresAt = iso(createdMs + this.policy.ttlSeconds * 1000);
    await this.db
      .insertInto('portal_sessions')
      .values({
        id_hash: sha256(token),
        user_id: user.id,
        company_id: user.companyId,
        created_at: iso(createdMs),
        expires_at: expiresAt,
        idle_expires_at: iso(Math.min(createdMs + this.policy.idleSeconds * 1000, Date.parse(expiresAt))),
      })
      .execute();
    await this.db.deleteFrom('portal_sessions').where('expires_at', '<', iso(createdMs)).execute();
    return { token, expiresAt };
  }

  /** The session's user when the token names a live session; slides the idle expiry forward. */
  async resume(token: string): Promise<ActiveSession | undefined> {
    if (!token || token.length > 100) return undefined;
    const idHash = sha256(token);
    const row = await this.db
      .selectFrom('portal_sessions')
      .selectAll()
      .where('id_hash', '=', idHash)
      .executeTakeFirst();
    if (!row) return undefined;
    const nowMs = this.clock();
    if (Date.parse(row.expires_at) <= nowMs || Date.parse(row.idle_expires_at) <= nowMs) {
      await this.db.deleteFrom('portal_sessions').where('id_hash', '=', idHash).execute();
      return undefined;
    }
    const user = await this.users.find(row.user_id);
    if (!user) return undefined;
    await this.db
      .updateTable('portal_sessions')
      .set({
        idle_expires_at: iso(Math.min(nowMs + this.policy.idleSeconds * 1000, Date.parse(row.expires_at))),
      })
      .where('id_hash', '=', idHash)
      .execute();
    return { user, expiresAt: row.expires_at };
  }

  async end(token: string): Promise<void> {
    await this.db.deleteFrom('portal_sessions').where('id_hash', '=', sha256(token)).execute();
  }

  /**
   * CSRF protection is the synchronizer-token pattern (OWASP CSRF Prevention Cheat Sheet) with the token derived
   * instead of stored: HMAC-SHA256 keyed by the session's secret id. Only a page that can read our JSON responses
   * (same origin; there is no CORS on /portal/api) learns it from `GET /portal/api/session`; a cross-site form or
   * fetch carries the cookie but cannot know the value to put in `X-CSRF-Token`. It changes with every session.
   */
  csrfTokenFor(token: string): string {
    return createHmac('sha256', token).update('parley-portal-csrf-v1').digest('base64url');
  }

  csrfTokenMatches(token: string, presented: string | undefined): boolean {
    if (!presented) return false;
    const expected = Buffer.from(this.csrfTokenFor(token));
    const given = Buffer.from(presented);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}
