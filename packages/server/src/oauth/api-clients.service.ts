import type { Kysely } from 'kysely';
import type { AuditLog } from '../audit/audit.service.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { BadRequestError, NotFoundError } from '../errors/app-error.ts';
import { now } from '../storage/columns.ts';
import type { Store } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';
import {
  CLIENT_SECRET_PREFIX,
  generateClientId,
  generateClientSecret,
  isClientIdSyntax,
  isWellFormedSecret,
  secretHint,
} from './credentials.ts';
import type { ApiClientsTable } from './oauth.tables.ts';
import { SCOPES, type Scope } from './principal.ts';
import { SecretDigester } from './secret-digest.ts';

export interface ApiClient {
  clientId: string;
  companyId: string;
  name: string;
  scopes: Scope[];
  secretHint: string;
  createdAt: string;
  lastUsedAt: string | null;
  deletedAt: string | null;
}

/**
 * An API client as the CLI prints it and the portal API answers it (snake_case). Never the secret: only its last
 * characters, behind the secret's prefix, to tell clients apart.
 */
export const apiClientView = (c: ApiClient) => ({
  client_id: c.clientId,
  name: c.name,
  scopes: c.scopes,
  secret_hint: `${CLIENT_SECRET_PREFIX}…${c.secretHint}`,
  created_at: c.createdAt,
  last_used_at: c.lastUsedAt,
});

export interface CreatedApiClient {
  client: ApiClient;
  /** The only time the secret exists outside the caller's hands: hand it over once, never store or log it. */
  secret: string;
}

/** Why an authentication failed. Kept server-side (audit), never told to the caller (no oracle). */
export type AuthFailureReason =
  | 'malformed_client_id'
  | 'malformed_secret'
  | 'unknown_client'
  | 'deleted_client'
  | 'wrong_secret';

export type AuthResult =
  | { ok: true; client: ApiClient }
  | { ok: false; reason: AuthFailureReason; client?: ApiClient };

export const API_CLIENT_NAME_MAX = 200;
/** last_used_at is refreshed at most this often per client and node, so a busy client costs no write per token. */
const LAST_USED_PRECISION_MS = 60_000;

export class ApiClientsService {
  private readonly db: Kysely<Database>;
  private readonly digester: SecretDigester;
  private readonly lastTouched = new Map<string, number>();
  /** The lookup of every token request, compiled once for this database's dialect (skips Kysely's builder). */
  private readonly byIdSql: string;

  constructor(
    private readonly store: Store,
    sealer: Sealer,
    private readonly companies: CompaniesService,
    private readonly audit: AuditLog,
  ) {
    this.db = store.db;
    this.digester = new SecretDigester(store.db, sealer);
    this.byIdSql = this.db.selectFrom('api_clients').selectAll().where('id', '=', '').compile().sql;
  }

  async create(input: {
    companyId: string;
    name: string;
    scopes: string[];
    actor?: string;
  }): Promise<CreatedApiClient> {
    const name = validName(input.name);
    const scopes = validScopes(input.scopes);
    await this.companies.get(input.companyId);
    const secret = generateClientSecret();
    const row: ApiClientsTable = {
      id: generateClientId(),
      company_id: input.companyId,
      name,
      scopes: JSON.stringify(scopes),
      secret_digest: await this.digester.digest(secret),
      pepper_version: this.digester.version,
      secret_hint: secretHint(secret),
      created_at: now(),
      last_used_at: null,
      deleted_at: null,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('api_clients').values(row).execute();
      await this.audit.record(
        {
          type: 'api_client.created',
          companyId: row.company_id,
          actor: input.actor ?? 'system',
          subject: row.id,
          details: { client_id: row.id, name, scopes },
        },
        trx,
      );
    });
    return { client: toClient(row), secret };
  }

  /** The company's clients that are not deleted, oldest first. */
  async list(companyId: string): Promise<ApiClient[]> {
    await this.companies.get(companyId);
    const rows = await this.db
      .selectFrom('api_clients')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toClient);
  }

  /** Any client by id, deleted ones included (for audit and tests); `undefined` for ids of other syntax. */
  async find(clientId: string): Promise<ApiClient | undefined> {
    if (!isClientIdSyntax(clientId)) return undefined;
    const row = await this.db
      .selectFrom('api_clients')
      .selectAll()
      .where('id', '=', clientId)
      .executeTakeFirst();
    return row && toClient(row);
  }

  /**
   * Soft-deletes a client of the company: it never obtains a token again; tokens already issued work until they
   * expire (spec "API client lifecycle"). A client of another company, or already deleted, is "not found".
   */
  async delete(companyId: string, clientId: string, actor = 'system'): Promise<ApiClient> {
    await this.companies.get(companyId);
    const deletedAt = now();
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('api_clients')
        .set({ deleted_at: deletedAt })
        .where('id', '=', clientId)
        .where('company_id', '=', companyId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1)
        throw new NotFoundError('api_client_not_found', 'No such API client.');
      await this.audit.record(
        { type: 'api_client.deleted', companyId, actor, subject: clientId, details: { client_id: clientId } },
        trx,
      );
      const row = await trx
        .selectFrom('api_clients')
        .selectAll()
        .where('id', '=', clientId)
        .executeTakeFirstOrThrow();
      return toClient(row);
    });
  }

  /**
   * Checks a client id and secret. Malformed values are refused before any lookup; for a well-formed secret the
   * HMAC is computed and compared in constant time whether or not the client exists, so the answer time does not
   * tell which client ids exist.
   */
  async authenticate(clientId: string, secret: string): Promise<AuthResult> {
    if (!isClientIdSyntax(clientId)) return { ok: false, reason: 'malformed_client_id' };
    if (!isWellFormedSecret(secret)) return { ok: false, reason: 'malformed_secret' };
    const [row] = await this.store.read<ApiClientsTable>(this.byIdSql, [clientId]);
    const matches = await this.digester.matches(secret, row?.secret_digest);
    if (!row) return { ok: false, reason: 'unknown_client' };
    const client = toClient(row);
    if (!matches) return { ok: false, reason: 'wrong_secret', client };
    if (row.deleted_at !== null) return { ok: false, reason: 'deleted_client', client };
    return { ok: true, client };
  }

  /** Records that the client obtained a token (coarse: once a minute per node). */
  async touch(clientId: string): Promise<void> {
    const at = Date.now();
    const last = this.lastTouched.get(clientId);
    if (last !== undefined && at - last < LAST_USED_PRECISION_MS) return;
    if (this.lastTouched.size > 10_000) this.lastTouched.clear();
    this.lastTouched.set(clientId, at);
    await this.db
      .updateTable('api_clients')
      .set({ last_used_at: new Date(at).toISOString() })
      .where('id', '=', clientId)
      .execute();
  }
}

function validName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > API_CLIENT_NAME_MAX) {
    throw new BadRequestError(
      'invalid_name',
      `An API client name is 1 to ${API_CLIENT_NAME_MAX} characters.`,
    );
  }
  return trimmed;
}

/** A non-empty subset of SCOPES, duplicates removed, in the order given. */
export function validScopes(scopes: string[]): Scope[] {
  const unique = [...new Set(scopes.map((s) => s.trim()).filter(Boolean))];
  const unknown = unique.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new BadRequestError(
      'invalid_scopes',
      `Unknown scopes: ${unknown.join(', ')}. Known: ${SCOPES.join(', ')}.`,
    );
  }
  if (unique.length === 0)
    throw new BadRequestError('invalid_scopes', 'An API client needs at least one scope.');
  return unique as Scope[];
}

function toClient(row: ApiClientsTable): ApiClient {
  return {
    clientId: row.id,
    companyId: row.company_id,
    name: row.name,
    scopes: JSON.parse(row.scopes),
    secretHint: row.secret_hint,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    deletedAt: row.deleted_at,
  };
}
