import type {
  ApiClientQuotasView,
  ApiClientSecretView,
  ApiClientView,
  RotatedClientSecretView,
} from '@parley/wire-types';
import type { Kysely } from 'kysely';
import type { AuditLog } from '../audit/audit.service.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../errors/app-error.ts';
import { now } from '../storage/columns.ts';
import type { Store } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';
import { validClientKeys } from './client-keys.ts';
import {
  CLIENT_SECRET_PREFIX,
  generateClientId,
  generateClientSecret,
  isClientIdSyntax,
  isWellFormedSecret,
  randomBase62,
  secretHint,
} from './credentials.ts';
import type { ApiClientsTable, DpopPolicy } from './oauth.tables.ts';
import { SCOPES, type Scope } from './principal.ts';
import { SecretDigester } from './secret-digest.ts';
import { claimJtiOnce } from './used-jtis.ts';

export interface ApiClient {
  clientId: string;
  companyId: string;
  name: string;
  scopes: Scope[];
  secretHint: string;
  createdAt: string;
  lastUsedAt: string | null;
  deletedAt: string | null;
  authMethod: ClientAuthKind;
  /** `private_key_jwt` with inline keys: the JWK Set as registered. */
  jwks: { keys: Record<string, unknown>[] } | null;
  jwksUri: string | null;
  /** DPoP (RFC 9449) for this client's tokens: a proof may bind them (`optional`), or must (`required`). */
  dpop: DpopPolicy;
  /** This client's own quotas; `null` where it uses the deployment's default (docs/machine-access.md "Quotas"). */
  quotas: ClientQuotaSettings;
}

/** Requests per minute one client may make; `null`: the configured default. */
export interface ClientQuotaSettings {
  tokensPerMinute: number | null;
  apiCallsPerMinute: number | null;
}

/** The highest quota a client may be given: beyond it a quota is no limit, and would hide a typo. */
export const MAX_QUOTA_PER_MINUTE = 1_000_000;

/** `client_secret`: Basic or body parameters (RFC 6749 §2.3.1); `private_key_jwt`: RFC 7523 §2.2 assertions. */
export type ClientAuthKind = 'client_secret' | 'private_key_jwt';

/** One secret of a client as listings show it (never the secret, nor its digest): the portal API's shape. */
export type ClientSecretView = ApiClientSecretView;

/** A rotation's answer; its `client_secret` is shown once, never stored or logged. */
export type RotatedSecret = RotatedClientSecretView;

/**
 * An API client as the CLI prints it and the portal API answers it (snake_case). Never the secret: only its last
 * characters, behind the secret's prefix, to tell clients apart.
 */
export const apiClientView = (c: ApiClient): ApiClientView => ({
  client_id: c.clientId,
  name: c.name,
  scopes: c.scopes,
  auth_method: c.authMethod === 'private_key_jwt' ? 'private_key_jwt' : 'client_secret_basic',
  ...(c.authMethod === 'client_secret' ? { secret_hint: `${CLIENT_SECRET_PREFIX}…${c.secretHint}` } : {}),
  ...(c.jwksUri ? { jwks_uri: c.jwksUri } : {}),
  dpop: c.dpop,
  created_at: c.createdAt,
  last_used_at: c.lastUsedAt,
  quotas: quotaView(c.quotas),
});

/** A client's quotas as the API, portal and CLI show them (`null`: the default applies). */
export const quotaView = (q: ClientQuotaSettings): ApiClientQuotasView => ({
  tokens_per_minute: q.tokensPerMinute,
  api_calls_per_minute: q.apiCallsPerMinute,
});

export interface CreatedApiClient {
  client: ApiClient;
  /** The only time the secret exists outside the caller's hands: hand it over once, never store or log it. */
  secret: string;
}

export interface NewApiClient {
  companyId: string;
  name: string;
  scopes: string[];
  actor?: string;
  /** Default `client_secret`. */
  authMethod?: ClientAuthKind;
  /** `private_key_jwt`: exactly one of `jwks` (a JWK Set of public keys) and `jwksUri`. */
  jwks?: unknown;
  jwksUri?: string;
  /** Default `optional`. */
  dpop?: DpopPolicy;
}

/** Why an authentication failed. Kept server-side (audit), never told to the caller (no oracle). */
export type AuthFailureReason =
  | 'malformed_client_id'
  | 'malformed_secret'
  | 'unknown_client'
  | 'deleted_client'
  | 'wrong_secret'
  | 'wrong_auth_method'
  | 'invalid_assertion'
  /** A `jwks_uri` client whose key set could not be fetched (refused by the outbound policy, down, not a JWK Set). */
  | 'jwks_unavailable';

export type AuthResult =
  | { ok: true; client: ApiClient; secretId?: string }
  | { ok: false; reason: AuthFailureReason; client?: ApiClient };

/** The row of a client lookup at the token endpoint: the client with one of its live secrets (if any). */
type ClientWithSecret = ApiClientsTable & {
  s_id: string | null;
  s_digest: string | null;
  s_expires_at: string | null;
};

/** Default overlap of a rotation: the old secret keeps working this long (docs/machine-access.md). */
export const DEFAULT_OLD_SECRET_LIFETIME_SECONDS = 7 * 24 * 3600;
/** Longest overlap accepted: a forgotten old secret should not live on for years. */
export const MAX_OLD_SECRET_LIFETIME_SECONDS = 90 * 24 * 3600;

export const API_CLIENT_NAME_MAX = 200;
/** last_used_at is refreshed at most this often per client and node, so a busy client costs no write per token. */
const LAST_USED_PRECISION_MS = 60_000;
const SECRET_ID_PREFIX = 'psk_';

export class ApiClientsService {
  private readonly db: Kysely<Database>;
  private readonly digester: SecretDigester;
  private readonly lastTouched = new Map<string, number>();
  /** Secrets used since the last flush (secret id → ms), written in one go (see `flushUsage`). */
  private readonly usedSecrets = new Map<string, number>();
  private usageTimer?: NodeJS.Timeout;
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
    // The client with each of its unrevoked secrets (one row per secret; one row with nulls when it has none).
    this.byIdSql = this.db
      .selectFrom('api_clients as c')
      .leftJoin('api_client_secrets as s', (join) =>
        join.onRef('s.client_id', '=', 'c.id').on('s.revoked_at', 'is', null),
      )
      .selectAll('c')
      .select(['s.id as s_id', 's.digest as s_digest', 's.expires_at as s_expires_at'])
      .where('c.id', '=', '')
      .compile().sql;
  }

  /** A `client_secret` client and its first secret. */
  async create(input: NewApiClient & { authMethod?: 'client_secret' }): Promise<CreatedApiClient> {
    const created = await this.createAny(input);
    return { client: created.client, secret: created.secret! };
  }

  /** A client of either kind; `secret` is `undefined` for `private_key_jwt` (such a client has none). */
  async createAny(input: NewApiClient): Promise<{ client: ApiClient; secret: string | undefined }> {
    const name = validName(input.name);
    const scopes = validScopes(input.scopes);
    const authMethod = input.authMethod ?? 'client_secret';
    const keys = authMethod === 'private_key_jwt' ? validClientKeys(input.jwks, input.jwksUri) : undefined;
    if (authMethod === 'client_secret' && (input.jwks !== undefined || input.jwksUri !== undefined)) {
      throw new BadRequestError('invalid_client_keys', 'Public keys are only for private_key_jwt clients.');
    }
    const dpop = validDpopPolicy(input.dpop);
    await this.companies.get(input.companyId);
    const secret = authMethod === 'client_secret' ? generateClientSecret() : undefined;
    const digest = secret === undefined ? '' : await this.digester.digest(secret);
    const createdAt = now();
    const row: ApiClientsTable = {
      id: generateClientId(),
      company_id: input.companyId,
      name,
      scopes: JSON.stringify(scopes),
      secret_digest: digest,
      pepper_version: this.digester.version,
      secret_hint: secret === undefined ? '' : secretHint(secret),
      created_at: createdAt,
      last_used_at: null,
      deleted_at: null,
      auth_method: authMethod,
      jwks: keys?.jwks ? JSON.stringify(keys.jwks) : null,
      jwks_uri: keys?.jwksUri ?? null,
      dpop,
      tokens_per_minute: null,
      api_calls_per_minute: null,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('api_clients').values(row).execute();
      if (secret !== undefined) {
        await trx
          .insertInto('api_client_secrets')
          .values(secretRow(row.id, digest, this.digester.version, secret, createdAt))
          .execute();
      }
      await this.audit.record(
        {
          type: 'api_client.created',
          companyId: row.company_id,
          actor: input.actor ?? 'system',
          subject: row.id,
          details: { client_id: row.id, name, scopes, auth_method: authMethod, dpop },
        },
        trx,
      );
    });
    return { client: toClient(row), secret };
  }

  /**
   * Adds a new secret to a `client_secret` client and gives every secret it had so far an expiry
   * `oldExpiresInSeconds` from now (or keeps an earlier one): both work during the overlap, so integrations can
   * switch without a failed request. The new secret is returned once.
   */
  async rotateSecret(input: {
    companyId: string;
    clientId: string;
    oldExpiresInSeconds?: number;
    actor?: string;
  }): Promise<RotatedSecret> {
    const overlap = input.oldExpiresInSeconds ?? DEFAULT_OLD_SECRET_LIFETIME_SECONDS;
    if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_OLD_SECRET_LIFETIME_SECONDS) {
      throw new BadRequestError(
        'invalid_expiry',
        `The old secret's lifetime is 0 to ${MAX_OLD_SECRET_LIFETIME_SECONDS / 86400} days.`,
      );
    }
    await this.companies.get(input.companyId);
    const secret = generateClientSecret();
    const digest = await this.digester.digest(secret);
    const at = Date.now();
    const createdAt = new Date(at).toISOString();
    const oldExpiresAt = new Date(at + overlap * 1000).toISOString();
    const row = secretRow(input.clientId, digest, this.digester.version, secret, createdAt);
    await this.db.transaction().execute(async (trx) => {
      const client = await this.liveClient(trx, input.companyId, input.clientId);
      if (client.auth_method !== 'client_secret') {
        throw new BadRequestError(
          'wrong_auth_method',
          'This client authenticates with private_key_jwt, not a secret.',
        );
      }
      await trx
        .updateTable('api_client_secrets')
        .set({ expires_at: oldExpiresAt })
        .where('client_id', '=', input.clientId)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', oldExpiresAt)]))
        .execute();
      await trx.insertInto('api_client_secrets').values(row).execute();
      await trx
        .updateTable('api_clients')
        .set({ secret_hint: row.hint })
        .where('id', '=', input.clientId)
        .execute();
      await this.audit.record(
        {
          type: 'api_client.secret_rotated',
          companyId: input.companyId,
          actor: input.actor ?? 'system',
          subject: input.clientId,
          details: { client_id: input.clientId, secret_id: row.id, old_secret_expires_at: oldExpiresAt },
        },
        trx,
      );
    });
    return {
      client_id: input.clientId,
      client_secret: secret,
      secret_id: row.id,
      old_secret_expires_at: oldExpiresAt,
    };
  }

  /** The client's secrets that still work (neither revoked nor expired), oldest first, with when each was last used. */
  async listSecrets(companyId: string, clientId: string): Promise<ClientSecretView[]> {
    await this.companies.get(companyId);
    await this.liveClient(this.db, companyId, clientId);
    await this.flushUsage();
    const at = now();
    const rows = await this.db
      .selectFrom('api_client_secrets')
      .select(['id', 'created_at', 'expires_at', 'last_used_at'])
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      created_at: r.created_at,
      expires_at: r.expires_at,
      last_used_at: r.last_used_at,
    }));
  }

  /**
   * Revokes one secret at once (the next token request with it gets `invalid_client`). The client's last working
   * secret cannot be revoked: rotate first, or delete the client.
   */
  async revokeSecret(input: {
    companyId: string;
    clientId: string;
    secretId: string;
    actor?: string;
  }): Promise<{ client_id: string; secret_id: string; revoked_at: string }> {
    await this.companies.get(input.companyId);
    const revokedAt = now();
    await this.db.transaction().execute(async (trx) => {
      await this.liveClient(trx, input.companyId, input.clientId);
      const live = await trx
        .selectFrom('api_client_secrets')
        .select('id')
        .where('client_id', '=', input.clientId)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', revokedAt)]))
        .execute();
      if (!live.some((s) => s.id === input.secretId)) {
        throw new NotFoundError('api_client_secret_not_found', 'No such working secret for this API client.');
      }
      if (live.length === 1) {
        throw new ConflictError(
          'last_client_secret',
          'This is the client’s only working secret: rotate it first, or delete the client.',
        );
      }
      await trx
        .updateTable('api_client_secrets')
        .set({ revoked_at: revokedAt })
        .where('id', '=', input.secretId)
        .execute();
      await this.audit.record(
        {
          type: 'api_client.secret_revoked',
          companyId: input.companyId,
          actor: input.actor ?? 'system',
          subject: input.clientId,
          details: { client_id: input.clientId, secret_id: input.secretId },
        },
        trx,
      );
    });
    return { client_id: input.clientId, secret_id: input.secretId, revoked_at: revokedAt };
  }

  /**
   * Sets a client's quotas (docs/machine-access.md "Quotas"): a number per minute, or `null` for the configured
   * default; a key left out keeps its value. Nodes apply the change within `QUOTA_CACHE_MS`
   * (packages/server/src/oauth/client-quotas.ts).
   */
  async setQuotas(input: {
    companyId: string;
    clientId: string;
    quotas: Partial<ClientQuotaSettings>;
    actor?: string;
  }): Promise<ClientQuotaSettings> {
    const changes: { tokens_per_minute?: number | null; api_calls_per_minute?: number | null } = {};
    if (input.quotas.tokensPerMinute !== undefined)
      changes.tokens_per_minute = validQuota(input.quotas.tokensPerMinute);
    if (input.quotas.apiCallsPerMinute !== undefined)
      changes.api_calls_per_minute = validQuota(input.quotas.apiCallsPerMinute);
    await this.companies.get(input.companyId);
    return this.db.transaction().execute(async (trx) => {
      await this.liveClient(trx, input.companyId, input.clientId);
      if (Object.keys(changes).length > 0)
        await trx.updateTable('api_clients').set(changes).where('id', '=', input.clientId).execute();
      const row = await this.liveClient(trx, input.companyId, input.clientId);
      const quotas = toClient(row).quotas;
      await this.audit.record(
        {
          type: 'api_client.quotas_changed',
          companyId: input.companyId,
          actor: input.actor ?? 'system',
          subject: input.clientId,
          details: { client_id: input.clientId, ...quotaView(quotas) },
        },
        trx,
      );
      return quotas;
    });
  }

  /** The quotas of any client by id (deleted ones too), for the per-node quota cache; `undefined` when unknown. */
  async quotasOf(clientId: string): Promise<ClientQuotaSettings | undefined> {
    return (await this.find(clientId))?.quotas;
  }

  /** A client of the company that is not deleted, or `api_client_not_found`. */
  private async liveClient(
    db: Kysely<Database>,
    companyId: string,
    clientId: string,
  ): Promise<ApiClientsTable> {
    const row = isClientIdSyntax(clientId)
      ? await db
          .selectFrom('api_clients')
          .selectAll()
          .where('id', '=', clientId)
          .where('company_id', '=', companyId)
          .where('deleted_at', 'is', null)
          .executeTakeFirst()
      : undefined;
    if (!row) throw new NotFoundError('api_client_not_found', 'No such API client.');
    return row;
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
    const rows = await this.store.read<ClientWithSecret>(this.byIdSql, [clientId]);
    // Secrets past their expiry are compared too (then ignored), so the work does not depend on which exist.
    const nowIso = now();
    const digests = rows.map((r) => r.s_digest ?? undefined);
    const matched = await this.digester.matchesAny(secret, digests.length > 0 ? digests : [undefined]);
    const row = rows[0];
    if (!row) return { ok: false, reason: 'unknown_client' };
    const client = toClient(row);
    const hit = matched === -1 ? undefined : rows[matched];
    if (!hit || (hit.s_expires_at !== null && hit.s_expires_at <= nowIso))
      return { ok: false, reason: 'wrong_secret', client };
    if (row.deleted_at !== null) return { ok: false, reason: 'deleted_client', client };
    if (row.auth_method !== 'client_secret') return { ok: false, reason: 'wrong_auth_method', client };
    return { ok: true, client, secretId: hit.s_id! };
  }

  /** A client by id for `private_key_jwt` (the assertion is checked by the caller); reasons as `authenticate`. */
  async findForAssertion(clientId: string): Promise<AuthResult> {
    if (!isClientIdSyntax(clientId)) return { ok: false, reason: 'malformed_client_id' };
    const [row] = await this.store.read<ClientWithSecret>(this.byIdSql, [clientId]);
    if (!row) return { ok: false, reason: 'unknown_client' };
    const client = toClient(row);
    if (row.deleted_at !== null) return { ok: false, reason: 'deleted_client', client };
    if (row.auth_method !== 'private_key_jwt') return { ok: false, reason: 'wrong_auth_method', client };
    return { ok: true, client };
  }

  /**
   * Marks a client assertion's `jti` as used (RFC 7523 §3 rule 7); `false` when it was used before, on any node:
   * the row's primary key decides. Rows are kept until the assertion expires (then purged, RevocationList).
   */
  async claimAssertionJti(clientId: string, jti: string, exp: number): Promise<boolean> {
    return claimJtiOnce(this.store, `${clientId}|${jti}`, exp);
  }

  /**
   * Records that a secret was used. Nothing is written per grant: uses are gathered in memory and written by
   * `flushUsage` at most once a second (one UPDATE per secret used in that second), like the audit batcher.
   */
  recordSecretUse(secretId: string): void {
    this.usedSecrets.set(secretId, Date.now());
    if (!this.usageTimer) {
      this.usageTimer = setTimeout(() => void this.flushUsage().catch(() => undefined), 1000);
      this.usageTimer.unref();
    }
  }

  /** Writes the gathered secret uses (called by the timer, by listings, and at shutdown). */
  async flushUsage(): Promise<void> {
    clearTimeout(this.usageTimer);
    this.usageTimer = undefined;
    const batch = [...this.usedSecrets];
    this.usedSecrets.clear();
    for (const [id, at] of batch) {
      const iso = new Date(at).toISOString();
      await this.db
        .updateTable('api_client_secrets')
        .set({ last_used_at: iso })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', iso)]))
        .execute();
    }
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

/** `7d`, `12h`, `30m`, `45s` or `0` (stop at once) → seconds; anything else is `invalid_expiry`. */
export function parseDuration(text: string): number {
  const match = /^(\d{1,6})([dhms]?)$/.exec(text.trim());
  if (!match || (match[2] === '' && match[1] !== '0')) {
    throw new BadRequestError('invalid_expiry', 'A duration is a number with d, h, m or s (e.g. 7d), or 0.');
  }
  const unit = { d: 86400, h: 3600, m: 60, s: 1, '': 0 }[match[2] as 'd' | 'h' | 'm' | 's' | ''];
  return Number(match[1]) * unit;
}

function validDpopPolicy(dpop: string | undefined): DpopPolicy {
  if (dpop === undefined) return 'optional';
  if (dpop === 'optional' || dpop === 'required') return dpop;
  throw new BadRequestError('invalid_dpop_policy', 'DPoP is optional or required.');
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

/** A quota is a whole number of requests per minute from 1 to MAX_QUOTA_PER_MINUTE, or null (the default). */
function validQuota(value: number | null): number | null {
  if (value === null) return null;
  if (!Number.isInteger(value) || value < 1 || value > MAX_QUOTA_PER_MINUTE) {
    throw new BadRequestError(
      'invalid_quota',
      `A quota is a whole number of requests per minute from 1 to ${MAX_QUOTA_PER_MINUTE}, or null for the default.`,
    );
  }
  return value;
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

function secretRow(
  clientId: string,
  digest: string,
  pepperVersion: number,
  secret: string,
  createdAt: string,
) {
  return {
    id: SECRET_ID_PREFIX + randomBase62(22),
    client_id: clientId,
    digest,
    pepper_version: pepperVersion,
    hint: secretHint(secret),
    created_at: createdAt,
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
  };
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
    authMethod: row.auth_method,
    jwks: row.jwks ? JSON.parse(row.jwks) : null,
    jwksUri: row.jwks_uri,
    dpop: row.dpop,
    quotas: { tokensPerMinute: row.tokens_per_minute, apiCallsPerMinute: row.api_calls_per_minute },
  };
}
