import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { requireCompany } from '../companies/require-company.ts';
import { now } from '../storage/columns.ts';
import type { Database } from '../storage/schema.ts';
import { dummyPasswordHash, hashPassword, verifyPassword } from './password.ts';
import {
  EMAIL_MAX_LENGTH,
  EmailTakenError,
  InvalidEmailError,
  InvalidNameError,
  InvalidRoleError,
  NAME_MAX_LENGTH,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  UserNotFoundError,
  WeakPasswordError,
} from './users.errors.ts';
import type { UserRole } from './users.tables.ts';

export interface PortalUser {
  id: string;
  companyId: string;
  email: string;
  /** Display name (users/display-name.ts); null when none was given. */
  name: string | null;
  role: UserRole;
  createdAt: string;
  lastLoginAt: string | null;
}

export interface CreateUserInput {
  companyId: string;
  email: string;
  password: string;
  role: string;
  /** Display name; omitted or null: none (the email's local part is shown). */
  name?: string | null;
}

export const ROLES: readonly UserRole[] = ['admin', 'agent'];

// Deliberately loose (one @, a dot in the domain, no spaces): the address is a login name, not a mailbox we verify.
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/**
 * A display name as stored: trimmed, inner runs of spaces made one; null stays null (no name). Refused when empty,
 * longer than NAME_MAX_LENGTH or holding a control character: a line break would forge a second line in a notice,
 * a bidirectional override would show other words than it holds.
 */
export function normalizeDisplayName(name: string | null | undefined): string | null {
  if (name === null || name === undefined) return null;
  const tidy = name.trim().replace(/ {2,}/g, ' ');
  if (
    tidy.length === 0 ||
    [...tidy].length > NAME_MAX_LENGTH ||
    /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(tidy)
  )
    throw new InvalidNameError();
  return tidy;
}

/** Portal users: people who sign in to the portal for one company, as `admin` (everything) or `agent` (inbox). */
export class UsersService {
  constructor(private readonly db: Kysely<Database>) {}

  async create(input: CreateUserInput): Promise<PortalUser> {
    const email = normalizeEmail(input.email);
    if (email.length > EMAIL_MAX_LENGTH || !EMAIL_RE.test(email)) throw new InvalidEmailError();
    if (input.password.length < PASSWORD_MIN_LENGTH || input.password.length > PASSWORD_MAX_LENGTH)
      throw new WeakPasswordError();
    if (!ROLES.includes(input.role as UserRole)) throw new InvalidRoleError();
    const name = normalizeDisplayName(input.name);
    await requireCompany(this.db, input.companyId);
    // Checked before hashing so a taken email costs no argon2 run; the unique index below still decides races.
    if (await this.emailTaken(email)) throw new EmailTakenError();
    const user: PortalUser = {
      id: randomUUID(),
      companyId: input.companyId,
      email,
      name,
      role: input.role as UserRole,
      createdAt: now(),
      lastLoginAt: null,
    };
    const passwordHash = await hashPassword(input.password);
    try {
      await this.db
        .insertInto('portal_users')
        .values({
          id: user.id,
          company_id: user.companyId,
          email,
          name,
          password_hash: passwordHash,
          role: user.role,
          created_at: user.createdAt,
          last_login_at: null,
        })
        .execute();
    } catch (err) {
      // Two concurrent creations of one email: the unique index decides.
      if (await this.emailTaken(email)) throw new EmailTakenError();
      throw err;
    }
    return user;
  }

  /** The user whose email and password match, or undefined. Costs one argon2 verification either way. */
  async verifyCredentials(email: string, password: string): Promise<PortalUser | undefined> {
    const row = await this.db
      .selectFrom('portal_users')
      .selectAll()
      .where('email', '=', normalizeEmail(email))
      .executeTakeFirst();
    // An over-long password cannot match, but it still costs the dummy verification: answering a known email
    // faster than an unknown one would reveal which accounts exist.
    if (!row || password.length > PASSWORD_MAX_LENGTH) {
      await verifyPassword(await dummyPasswordHash(), password);
      return undefined;
    }
    if (!(await verifyPassword(row.password_hash, password))) return undefined;
    const lastLoginAt = now();
    await this.db
      .updateTable('portal_users')
      .set({ last_login_at: lastLoginAt })
      .where('id', '=', row.id)
      .execute();
    return { ...toUser(row), lastLoginAt };
  }

  private async emailTaken(email: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('portal_users')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirst();
    return row !== undefined;
  }

  async find(id: string): Promise<PortalUser | undefined> {
    const row = await this.db.selectFrom('portal_users').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toUser(row);
  }

  /**
   * Gives a user of `companyId` a display name (null removes it); the user as it is now. A user of another company
   * is not found, exactly like one that does not exist.
   */
  async setName(companyId: string, userId: string, name: string | null): Promise<PortalUser> {
    const normalized = normalizeDisplayName(name);
    const result = await this.db
      .updateTable('portal_users')
      .set({ name: normalized })
      .where('id', '=', userId)
      .where('company_id', '=', companyId)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) throw new UserNotFoundError();
    const user = await this.find(userId);
    if (!user) throw new UserNotFoundError();
    return user;
  }

  async list(companyId: string): Promise<PortalUser[]> {
    const rows = await this.db
      .selectFrom('portal_users')
      .selectAll()
      .where('company_id', '=', companyId)
      .orderBy('created_at')
      .execute();
    return rows.map(toUser);
  }
}

function toUser(row: {
  id: string;
  company_id: string;
  email: string;
  name: string | null;
  role: UserRole;
  created_at: string;
  last_login_at: string | null;
}): PortalUser {
  return {
    id: row.id,
    companyId: row.company_id,
    email: row.email,
    name: row.name,
    role: row.role,
    createdAt: row.created_at,
    lastLoginAt: row.last_login_at,
  };
}
