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
  InvalidRoleError,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  WeakPasswordError,
} from './users.errors.ts';
import type { UserRole } from './users.tables.ts';

export interface PortalUser {
  id: string;
  companyId: string;
  email: string;
  role: UserRole;
  createdAt: string;
  lastLoginAt: string | null;
}

export interface CreateUserInput {
  companyId: string;
  email: string;
  password: string;
  role: string;
}

export const ROLES: readonly UserRole[] = ['admin', 'agent'];

// Deliberately loose (one @, a dot in the domain, no spaces): the address is a login name, not a mailbox we verify.
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** Portal users: people who sign in to the portal for one company, as `admin` (everything) or `agent` (inbox). */
export class UsersService {
  constructor(private readonly db: Kysely<Database>) {}

  async create(input: CreateUserInput): Promise<PortalUser> {
    const email = normalizeEmail(input.email);
    if (email.length > EMAIL_MAX_LENGTH || !EMAIL_RE.test(email)) throw new InvalidEmailError();
    if (input.password.length < PASSWORD_MIN_LENGTH || input.password.length > PASSWORD_MAX_LENGTH)
      throw new WeakPasswordError();
    if (!ROLES.includes(input.role as UserRole)) throw new InvalidRoleError();
    await requireCompany(this.db, input.companyId);
    // Checked before hashing so a taken email costs no argon2 run; the unique index below still decides races.
    if (await this.emailTaken(email)) throw new EmailTakenError();
    const user: PortalUser = {
      id: randomUUID(),
      companyId: input.companyId,
      email,
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
  role: UserRole;
  created_at: string;
  last_login_at: string | null;
}): PortalUser {
  return {
    id: row.id,
    companyId: row.company_id,
    email: row.email,
    role: row.role,
    createdAt: row.created_at,
    lastLoginAt: row.last_login_at,
  };
}
