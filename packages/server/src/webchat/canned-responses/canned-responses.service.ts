import { randomUUID } from 'node:crypto';
import type { CannedResponseView } from '@parley/wire-types';
import type { Kysely, Selectable } from 'kysely';
import { isUuid } from '../../companies/companies.service.ts';
import { ConflictError, NotFoundError } from '../../errors/app-error.ts';
import { now } from '../../storage/columns.ts';
import type { Database } from '../../storage/schema.ts';
import type { CannedResponsesTable } from './canned-responses.tables.ts';

/** A saved reply as the portal API answers it (packages/wire-types). */
export type CannedResponse = CannedResponseView;

export interface CannedResponseInput {
  shortcut: string;
  title: string;
  content: string;
}

/** How a shortcut is written after `/`: lower-case letters, digits, `-` and `_`, 1–32 characters. */
export const SHORTCUT_PATTERN = '^[a-z0-9][a-z0-9_-]{0,31}$';

const cannedResponseNotFound = () =>
  new NotFoundError('canned_response_not_found', 'No canned response of this company has that id.');
const shortcutTaken = () =>
  new ConflictError('shortcut_taken', 'Another canned response of this company uses this shortcut.');

const view = (row: Selectable<CannedResponsesTable>): CannedResponse => ({
  id: row.id,
  shortcut: row.shortcut,
  title: row.title,
  content: row.content,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/**
 * A company's canned responses (docs/routing.md "Canned responses"): saved replies agents insert with `/shortcut`.
 * Shortcuts are unique per company; the unique index decides between two concurrent writes.
 */
export class CannedResponsesService {
  constructor(private readonly db: Kysely<Database>) {}

  /** Sorted by shortcut; `query` keeps those whose shortcut or title contains it (any case). */
  async list(companyId: string, query?: string): Promise<CannedResponse[]> {
    const rows = await this.db
      .selectFrom('canned_responses')
      .selectAll()
      .where('company_id', '=', companyId)
      .orderBy('shortcut')
      .execute();
    const needle = query?.trim().toLowerCase();
    return rows
      .filter((r) => !needle || r.shortcut.includes(needle) || r.title.toLowerCase().includes(needle))
      .map(view);
  }

  async create(companyId: string, input: CannedResponseInput): Promise<CannedResponse> {
    const at = now();
    const row = { id: randomUUID(), company_id: companyId, ...input, created_at: at, updated_at: at };
    await this.write(companyId, input.shortcut, undefined, () =>
      this.db.insertInto('canned_responses').values(row).execute(),
    );
    return view(row);
  }

  async update(companyId: string, id: string, input: CannedResponseInput): Promise<CannedResponse> {
    await this.find(companyId, id);
    await this.write(companyId, input.shortcut, id, () =>
      this.db
        .updateTable('canned_responses')
        .set({ ...input, updated_at: now() })
        .where('id', '=', id)
        .where('company_id', '=', companyId)
        .execute(),
    );
    return this.find(companyId, id);
  }

  async delete(companyId: string, id: string): Promise<void> {
    await this.find(companyId, id);
    await this.db
      .deleteFrom('canned_responses')
      .where('id', '=', id)
      .where('company_id', '=', companyId)
      .execute();
  }

  async find(companyId: string, id: string): Promise<CannedResponse> {
    const row = isUuid(id)
      ? await this.db
          .selectFrom('canned_responses')
          .selectAll()
          .where('id', '=', id)
          .where('company_id', '=', companyId)
          .executeTakeFirst()
      : undefined;
    if (!row) throw cannedResponseNotFound();
    return view(row);
  }

  /** Runs the write unless another response holds the shortcut; a race the unique index loses is the same 409. */
  private async write(
    companyId: string,
    shortcut: string,
    ownId: string | undefined,
    run: () => Promise<unknown>,
  ): Promise<void> {
    if (await this.heldByAnother(companyId, shortcut, ownId)) throw shortcutTaken();
    try {
      await run();
    } catch (err) {
      if (await this.heldByAnother(companyId, shortcut, ownId)) throw shortcutTaken();
      throw err;
    }
  }

  private async heldByAnother(companyId: string, shortcut: string, ownId?: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('canned_responses')
      .select('id')
      .where('company_id', '=', companyId)
      .where('shortcut', '=', shortcut)
      .executeTakeFirst();
    return row !== undefined && row.id !== ownId;
  }
}
