import { randomUUID } from 'node:crypto';
import { type Kysely, type Selectable, sql } from 'kysely';
import { isUuid } from '../../companies/companies.service.ts';
import { lockCompany } from '../../companies/company-lock.ts';
import { requireCompany } from '../../companies/require-company.ts';
import { BadRequestError, NotFoundError } from '../../errors/app-error.ts';
import { now } from '../../storage/columns.ts';
import type { Dialect } from '../../storage/database.ts';
import type { Database } from '../../storage/schema.ts';
import type { ChannelsTable } from '../webchat.tables.ts';

/** How a channel treats visitor tokens (docs/design.md "Visitor identity"). */
export type IdentityMode = 'off' | 'optional' | 'required';
export const IDENTITY_MODES: readonly IdentityMode[] = ['off', 'optional', 'required'];

/** A channel's identity settings as stored: the mode and the sealed secrets (opened only by identity/). */
export interface ChannelIdentityState {
  mode: IdentityMode;
  /** Sealed current secret; null until the channel first gets one. */
  sealedSecret: string | null;
  /** Sealed secret before the last rotation, verifying tokens until `previousUntil`. */
  sealedPreviousSecret: string | null;
  previousUntil: string | null;
}

/** A widget or app placement: which digital employee answers and which browser origins may use it. */
export interface Channel {
  id: string;
  companyId: string;
  name: string;
  digitalEmployeeId: string;
  allowedOrigins: string[];
  createdAt: string;
  identity: ChannelIdentityState;
}

export interface CreateChannelInput {
  companyId: string;
  name: string;
  digitalEmployeeId: string;
  allowedOrigins?: string[];
}

export const CHANNEL_NAME_MAX = 200;

export class ChannelsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Creates a channel routed to a digital employee of the company. The employee is checked and the channel stored
   * under the company's lock (companies/company-lock.ts), which deleting a digital employee takes too: a channel
   * never points at one deleted meanwhile.
   */
  async create(input: CreateChannelInput): Promise<Channel> {
    const name = input.name.trim();
    if (name.length === 0 || name.length > CHANNEL_NAME_MAX) {
      throw new BadRequestError('invalid_name', `A channel name is 1 to ${CHANNEL_NAME_MAX} characters.`);
    }
    await requireCompany(this.db, input.companyId);
    const allowedOrigins = (input.allowedOrigins ?? []).map(normalizeOrigin);
    const channel: Channel = {
      id: randomUUID(),
      companyId: input.companyId,
      name,
      digitalEmployeeId: input.digitalEmployeeId,
      allowedOrigins,
      createdAt: now(),
      identity: { mode: 'off', sealedSecret: null, sealedPreviousSecret: null, previousUntil: null },
    };
    await this.db.transaction().execute(async (trx) => {
      await lockCompany(trx, this.dialect, input.companyId);
      const employee = isUuid(input.digitalEmployeeId)
        ? await trx
            .selectFrom('digital_employees')
            .select('id')
            .where('id', '=', input.digitalEmployeeId)
            .where('company_id', '=', input.companyId)
            .executeTakeFirst()
        : undefined;
      if (!employee)
        throw new NotFoundError(
          'digital_employee_not_found',
          'No digital employee of this company has that id.',
        );
      await trx
        .insertInto('channels')
        .values({
          id: channel.id,
          company_id: channel.companyId,
          name: channel.name,
          digital_employee_id: channel.digitalEmployeeId,
          allowed_origins: JSON.stringify(allowedOrigins),
          created_at: channel.createdAt,
        })
        .execute();
    });
    return channel;
  }

  /** The channel if it belongs to this company; `undefined` otherwise (never reveals other companies' channels). */
  async find(companyId: string, channelId: string): Promise<Channel | undefined> {
    if (!isUuid(channelId)) return undefined;
    const row = await this.db
      .selectFrom('channels')
      .selectAll()
      .where('id', '=', channelId)
      .where('company_id', '=', companyId)
      .executeTakeFirst();
    return row && toChannel(row);
  }

  async list(companyId: string): Promise<Channel[]> {
    const rows = await this.db
      .selectFrom('channels')
      .selectAll()
      .where('company_id', '=', companyId)
      .orderBy('created_at')
      .execute();
    return rows.map(toChannel);
  }

  /** Whether any channel or company lists this origin: the answer to a CORS preflight, which carries no ids. */
  async isKnownOrigin(origin: string): Promise<boolean> {
    // The caller's text is matched literally: `%` and `_` in it are no wildcards (both stores honour ESCAPE).
    const needle = `%${JSON.stringify(origin).replace(/[\\%_]/g, '\\$&')}%`;
    const listing = sql<boolean>`allowed_origins like ${needle} escape '\\'`;
    const channel = await this.db.selectFrom('channels').select('id').where(listing).executeTakeFirst();
    if (channel) return true;
    const company = await this.db.selectFrom('companies').select('id').where(listing).executeTakeFirst();
    return company !== undefined;
  }
}

const toChannel = (row: Selectable<ChannelsTable>): Channel => ({
  id: row.id,
  companyId: row.company_id,
  name: row.name,
  digitalEmployeeId: row.digital_employee_id,
  allowedOrigins: JSON.parse(row.allowed_origins),
  createdAt: row.created_at,
  identity: {
    // Only identity/ writes the mode; anything else fails closed (tokens required) rather than open.
    mode: (IDENTITY_MODES as readonly string[]).includes(row.identity_mode)
      ? (row.identity_mode as IdentityMode)
      : 'required',
    sealedSecret: row.identity_secret,
    sealedPreviousSecret: row.identity_previous_secret,
    previousUntil: row.identity_previous_until,
  },
});

/** An origin is scheme://host[:port] (RFC 6454 §6.2), lower-cased, without path or trailing slash. */
export function normalizeOrigin(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new BadRequestError('invalid_origin', `"${value}" is not an origin such as https://shop.example.`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin === 'null') {
    throw new BadRequestError('invalid_origin', `"${value}" is not an http(s) origin.`);
  }
  if (url.pathname !== '/' || url.search || url.hash || url.username) {
    throw new BadRequestError(
      'invalid_origin',
      `"${value}" must be an origin only (no path, query or credentials).`,
    );
  }
  return url.origin;
}
