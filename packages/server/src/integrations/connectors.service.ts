import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { AuditLog } from '../audit/audit.service.ts';
import { isUuid } from '../companies/companies.service.ts';
import { SealError, type Sealer } from '../crypto/sealing.ts';
import type { EventRecorder } from '../events/domain-events.ts';
import { now } from '../storage/columns.ts';
import type { Dialect } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';
import { connectorKeyAad, KeyFingerprinter } from './connector-key.ts';
import { connectorType, connectorTypeNames } from './connector-types.ts';
import { validateApiKey, validateName, validateUrl } from './connector-validation.ts';
import {
  ConnectorKeyNotSetError,
  ConnectorKeyUnreadableError,
  ConnectorNotFoundError,
  InvalidConnectorError,
  KeyVersionMismatchError,
  RotationConflictError,
} from './connectors.errors.ts';
import type { ConnectorsTable } from './connectors.tables.ts';

/** A connector as every reader sees it: metadata only, never the key or anything derived from it. */
export interface Connector {
  id: string;
  companyId: string;
  name: string;
  type: string;
  url: string;
  apiKeySet: boolean;
  /** 0 = never set; +1 on every rotation. */
  keyVersion: number;
  rotatedAt: string | null;
  createdAt: string;
}

export interface KeyRotation {
  connectorId: string;
  keyVersion: number;
  rotatedAt: string;
  /** False when the key given is the current one: nothing was written (a repeated PUT is harmless). */
  changed: boolean;
}

/** Who acts, for audit events. */
export interface Actor {
  /** `client:<client_id>` or `cli`. */
  actor: string;
  clientId?: string;
  tokenId?: string;
  ip?: string;
}

export interface CreateConnectorInput {
  companyId: string;
  name: string;
  type: string;
  url?: string;
  apiKey?: string;
}

export interface RotateKeyInput {
  companyId: string;
  connectorId: string;
  apiKey: string;
  /** Lost-update protection (If-Match): told the current version, answers whether the caller expected it. */
  ifMatch?: (currentVersion: number) => boolean;
}

/** Retries of a rotation that lost a compare-and-set race (SQLite across processes; PostgreSQL locks the row). */
const ROTATION_ATTEMPTS = 25;

class LostRace extends Error {}

/**
 * Connectors of a company and their write-only API keys. Keys are sealed (AES-256-GCM envelope, associated data
 * `connector-key|<company>|<connector>|<version>`) before they reach the database and are opened only by
 * `readCredentials`, which the outbound client calls at the moment it makes a call.
 */
export class ConnectorsService {
  private readonly fingerprints: KeyFingerprinter;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly sealer: Sealer,
    private readonly audit: AuditLog,
    /** Webhook events, recorded in the transaction of the change (events/domain-events.ts). */
    private readonly events: EventRecorder,
  ) {
    this.fingerprints = new KeyFingerprinter(db, sealer);
  }

  async create(input: CreateConnectorInput, actor: Actor): Promise<Connector> {
    const name = validateName(input.name);
    const type = connectorType(input.type);
    if (!type)
      throw new InvalidConnectorError(
        'invalid_type',
        'type',
        `must be one of ${connectorTypeNames().join(', ')}`,
      );
    const url = validateUrl(input.url ?? type.defaultUrl);
    if (input.apiKey !== undefined) validateApiKey(input.apiKey);
    const id = randomUUID();
    const createdAt = now();
    const keyVersion = input.apiKey === undefined ? 0 : 1;
    const row: ConnectorsTable = {
      id,
      company_id: input.companyId,
      name,
      type: type.name,
      url,
      api_key_sealed:
        input.apiKey === undefined
          ? null
          : this.sealer.seal(input.apiKey, connectorKeyAad(input.companyId, id, keyVersion)),
      api_key_fingerprint:
        input.apiKey === undefined
          ? null
          : await this.fingerprints.fingerprint(input.companyId, id, input.apiKey),
      key_version: keyVersion,
      created_at: createdAt,
      rotated_at: keyVersion ? createdAt : null,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('connectors').values(row).execute();
      await this.audit.record(
        {
          type: 'connector.created',
          companyId: input.companyId,
          actor: actor.actor,
          subject: id,
          ip: actor.ip,
          details: { connector_id: id, type: type.name, key_version: keyVersion, ...clientDetails(actor) },
        },
        trx,
      );
    });
    // Every column is text or integer as written, so the inserted row is what a read would return.
    return toConnector(row);
  }

  async list(companyId: string): Promise<Connector[]> {
    const rows = await this.db
      .selectFrom('connectors')
      .selectAll()
      .where('company_id', '=', companyId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toConnector);
  }

  /** The connector if it exists in this company; another company's connector is `undefined` like a missing one. */
  async find(companyId: string, connectorId: string): Promise<Connector | undefined> {
    const row = await this.row(companyId, connectorId);
    return row && toConnector(row);
  }

  async get(companyId: string, connectorId: string): Promise<Connector> {
    const connector = await this.find(companyId, connectorId);
    if (!connector) throw new ConnectorNotFoundError();
    return connector;
  }

  async delete(companyId: string, connectorId: string, actor: Actor): Promise<void> {
    if (!isUuid(connectorId)) throw new ConnectorNotFoundError();
    await this.db.transaction().execute(async (trx) => {
      const result = await trx
        .deleteFrom('connectors')
        .where('id', '=', connectorId)
        .where('company_id', '=', companyId)
        .executeTakeFirst();
      if (Number(result.numDeletedRows) !== 1) throw new ConnectorNotFoundError();
      await this.audit.record(
        {
          type: 'connector.deleted',
          companyId,
          actor: actor.actor,
          subject: connectorId,
          ip: actor.ip,
          details: clientDetails(actor),
        },
        trx,
      );
    });
  }

  /**
   * Replaces the connector's key. Rotations of one connector are serialised: PostgreSQL locks the row
   * (`SELECT … FOR UPDATE`) and every write is a compare-and-set on `key_version`, so N concurrent rotations
   * produce N consecutive versions and the stored key is the one of the highest version. The audit event is
   * written in the same transaction. Giving the current key again changes nothing and returns the current version.
   */
  async rotateKey(input: RotateKeyInput, actor: Actor): Promise<KeyRotation> {
    validateApiKey(input.apiKey);
    if (!isUuid(input.connectorId)) throw new ConnectorNotFoundError();
    // Computed before the transaction: the fingerprint secret may need its own queries on first use.
    const fingerprint = await this.fingerprints.fingerprint(input.companyId, input.connectorId, input.apiKey);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction().execute((trx) => this.rotateOnce(trx, input, fingerprint, actor));
      } catch (err) {
        if (!(err instanceof LostRace || isSqliteBusy(err))) throw err;
        if (attempt >= ROTATION_ATTEMPTS) throw new RotationConflictError();
        await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
      }
    }
  }

  private async rotateOnce(
    trx: Transaction<Database>,
    input: RotateKeyInput,
    fingerprint: string,
    actor: Actor,
  ): Promise<KeyRotation> {
    let query = trx
      .selectFrom('connectors')
      .select(['key_version', 'rotated_at', 'api_key_fingerprint', 'api_key_sealed'])
      .where('id', '=', input.connectorId)
      .where('company_id', '=', input.companyId);
    if (this.dialect === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row) throw new ConnectorNotFoundError();
    if (input.ifMatch && !input.ifMatch(row.key_version)) throw new KeyVersionMismatchError(row.key_version);
    if (
      row.api_key_sealed &&
      row.rotated_at &&
      KeyFingerprinter.equal(row.api_key_fingerprint, fingerprint)
    ) {
      return {
        connectorId: input.connectorId,
        keyVersion: row.key_version,
        rotatedAt: row.rotated_at,
        changed: false,
      };
    }
    const keyVersion = row.key_version + 1;
    const rotatedAt = now();
    const result = await trx
      .updateTable('connectors')
      .set({
        api_key_sealed: this.sealer.seal(
          input.apiKey,
          connectorKeyAad(input.companyId, input.connectorId, keyVersion),
        ),
        api_key_fingerprint: fingerprint,
        key_version: keyVersion,
        rotated_at: rotatedAt,
      })
      .where('id', '=', input.connectorId)
      .where('company_id', '=', input.companyId)
      .where('key_version', '=', row.key_version)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) throw new LostRace();
    await this.audit.record(
      {
        type: 'connector.api_key_rotated',
        companyId: input.companyId,
        actor: actor.actor,
        subject: input.connectorId,
        ip: actor.ip,
        details: {
          connector_id: input.connectorId,
          key_version: keyVersion,
          previous_version: row.key_version,
          ...clientDetails(actor),
        },
      },
      trx,
    );
    // The version only: the key never leaves the sealed column.
    await this.events.record(trx, {
      type: 'connector.api_key_rotated',
      companyId: input.companyId,
      data: { connector_id: input.connectorId, key_version: keyVersion },
    });
    return { connectorId: input.connectorId, keyVersion, rotatedAt, changed: true };
  }

  /**
   * The connector and its current key, read and opened now (no cache: a rotation on any node is seen by the very
   * next call on every node sharing the database). Throws `connector_not_found`, `connector_key_not_set` or
   * `connector_key_unreadable` (integrity check failed).
   */
  async readCredentials(
    companyId: string,
    connectorId: string,
  ): Promise<{ connector: Connector; apiKey: string }> {
    const row = await this.row(companyId, connectorId);
    if (!row) throw new ConnectorNotFoundError();
    if (!row.api_key_sealed) throw new ConnectorKeyNotSetError();
    try {
      const apiKey = this.sealer.open(
        row.api_key_sealed,
        connectorKeyAad(row.company_id, row.id, row.key_version),
      );
      return { connector: toConnector(row), apiKey };
    } catch (err) {
      if (err instanceof SealError) throw new ConnectorKeyUnreadableError();
      throw err;
    }
  }

  /** The stored row, scoped to the company; a malformed id is not even looked up. */
  private async row(companyId: string, connectorId: string): Promise<ConnectorsTable | undefined> {
    if (!isUuid(connectorId)) return undefined;
    return this.db
      .selectFrom('connectors')
      .selectAll()
      .where('id', '=', connectorId)
      .where('company_id', '=', companyId)
      .executeTakeFirst();
  }
}

function toConnector(row: ConnectorsTable): Connector {
  return {
    id: row.id,
    companyId: row.company_id,
    name: row.name,
    type: row.type,
    url: row.url,
    apiKeySet: row.api_key_sealed !== null,
    keyVersion: row.key_version,
    rotatedAt: row.rotated_at,
    createdAt: row.created_at,
  };
}

const clientDetails = (actor: Actor): Record<string, string> => ({
  ...(actor.clientId ? { client_id: actor.clientId } : {}),
  ...(actor.tokenId ? { token_id: actor.tokenId } : {}),
});

const isSqliteBusy = (err: unknown): boolean =>
  typeof (err as { code?: unknown })?.code === 'string' &&
  (err as { code: string }).code.startsWith('SQLITE_BUSY');
