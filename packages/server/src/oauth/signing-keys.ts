import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit.service.ts';
import type { SealedColumn } from '../crypto/sealed-columns.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { now } from '../storage/columns.ts';
import type { Database } from '../storage/schema.ts';
import { encodeHeader, type JwsAlg, jwkThumbprint } from './jwt.ts';
import type { SigningKeysTable } from './oauth.tables.ts';

/** Access-token lifetime (spec "Limits"): `expires_in` and `exp - iat`. */
export const TOKEN_LIFETIME_SECONDS = 3600;
/**
 * How long a retired key stays published and accepted: the token lifetime plus 15 minutes, which covers the
 * largest clock tolerance (300 s), the longest key reload interval (300 s; a node may sign with the old key until
 * it reloads) and the JWKS cache lifetime we announce (300 s), as OIDC Core §10.1.1 asks.
 */
export const KEY_RETENTION_SECONDS = TOKEN_LIFETIME_SECONDS + 900;
export const JWKS_MAX_AGE_SECONDS = 300;
export const ACCESS_TOKEN_TYP = 'at+jwt';

export interface PublicSigningKey {
  kid: string;
  alg: JwsAlg;
  publicKey: KeyObject;
  /** Public JWK members (kty, crv/x/y or n/e). */
  jwk: Record<string, unknown>;
  status: 'active' | 'retired';
  createdAt: string;
  retiredAt: string | null;
}

export interface ActiveSigningKey extends PublicSigningKey {
  privateKey: KeyObject;
  /** base64url of `{"alg","typ":"at+jwt","kid"}`, encoded once. */
  encodedHeader: string;
}

export interface SigningKeyInfo {
  kid: string;
  alg: JwsAlg;
  status: 'active' | 'retired';
  createdAt: string;
  retiredAt: string | null;
  /** Still in the JWKS (active, or retired less than KEY_RETENTION_SECONDS ago). */
  published: boolean;
}

export interface JsonWebKeySet {
  keys: Array<Record<string, unknown>>;
}

export interface SigningKeyStoreOptions {
  /** Algorithm of keys this process creates. */
  alg: JwsAlg;
  reloadIntervalMs: number;
  logger?: Logger;
}

const generateKeyPairAsync = promisify(generateKeyPair);
const aadOf = (kid: string) => `signing_key|${kid}`;

/** Signing private keys take part in master-key rotation (crypto/sealed-columns.ts; listed by the composition root). */
export const SIGNING_KEY_SEALED_COLUMN: SealedColumn = {
  table: 'oauth_signing_keys',
  column: 'private_key',
  key: 'kid',
  associatedData: (row) => aadOf(String(row.kid)),
};

/**
 * The token signing keys, kept in the database (private keys sealed by the master key) and mirrored in memory.
 * Exactly one key is active (a partial unique index enforces it across nodes); `rotate` retires it and activates a
 * new one. Every node re-reads the keys periodically and whenever it meets an unknown `kid`, so a rotation done by
 * the CLI or another node is picked up without a restart.
 */
export class SigningKeyStore {
  private keys = new Map<string, PublicSigningKey>();
  private active?: ActiveSigningKey;
  private timer?: NodeJS.Timeout;
  private reloading?: Promise<void>;
  private lastUnknownKidReload = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sealer: Sealer,
    private readonly audit: AuditLog,
    private readonly options: SigningKeyStoreOptions,
  ) {}

  /** Makes sure a key exists, loads the keys and starts the periodic reload. Servers call this once. */
  async start(): Promise<void> {
    await this.ensureActiveKey();
    await this.reload();
    this.timer ??= setInterval(() => {
      this.reload().catch((err) => this.options.logger?.warn({ err }, 'reloading signing keys failed'));
    }, this.options.reloadIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Creates the first key if there is none. Safe when several nodes start at once: one insert wins. */
  async ensureActiveKey(actor = 'system'): Promise<void> {
    if (await this.activeRow()) return;
    const row = await this.newKeyRow();
    const result = await this.db
      .insertInto('oauth_signing_keys')
      .values(row)
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0) === 1) {
      await this.audit.record({
        type: 'signing_key.created',
        actor,
        subject: row.kid,
        details: { kid: row.kid, alg: row.alg },
      });
    }
  }

  /**
   * Retires the active key and activates a new one. The retired key stays published for KEY_RETENTION_SECONDS so
   * tokens it signed keep verifying until they expire; keys past that are deleted (private key included).
   */
  async rotate(actor = 'system'): Promise<{ kid: string; alg: JwsAlg; previousKid: string | null }> {
    const row = await this.newKeyRow();
    const at = now();
    const cutoff = new Date(Date.now() - KEY_RETENTION_SECONDS * 1000).toISOString();
    const previousKid = await this.db.transaction().execute(async (trx) => {
      const previous = await trx
        .selectFrom('oauth_signing_keys')
        .select('kid')
        .where('status', '=', 'active')
        .executeTakeFirst();
      await trx
        .updateTable('oauth_signing_keys')
        .set({ status: 'retired', retired_at: at })
        .where('status', '=', 'active')
        .execute();
      // A concurrent rotation elsewhere makes this insert violate the one-active index: the transaction fails.
      await trx.insertInto('oauth_signing_keys').values(row).execute();
      await trx
        .deleteFrom('oauth_signing_keys')
        .where('status', '=', 'retired')
        .where('retired_at', '<', cutoff)
        .execute();
      await this.audit.record(
        {
          type: 'signing_key.rotated',
          actor,
          subject: row.kid,
          details: { kid: row.kid, alg: row.alg, previous_kid: previous?.kid ?? null },
        },
        trx,
      );
      return previous?.kid ?? null;
    });
    await this.reload();
    return { kid: row.kid, alg: row.alg, previousKid };
  }

  /** Re-reads published keys; concurrent callers share one query. */
  reload(): Promise<void> {
    this.reloading ??= this.load().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  /** The key new tokens are signed with. */
  signingKey(): ActiveSigningKey {
    if (!this.active) throw new Error('signing keys are not loaded: call start() first');
    return this.active;
  }

  /** A published key by `kid`, from memory. */
  key(kid: string): PublicSigningKey | undefined {
    const key = this.keys.get(kid);
    return key && isPublished(key, Date.now()) ? key : undefined;
  }

  /**
   * A published key by `kid`; an unknown `kid` triggers a reload first (another node or the CLI may have rotated),
   * at most once a second so tokens with made-up `kid`s cannot flood the database.
   */
  async keyOrReload(kid: string): Promise<PublicSigningKey | undefined> {
    const known = this.key(kid);
    if (known) return known;
    const at = Date.now();
    if (at - this.lastUnknownKidReload < Math.min(1000, this.options.reloadIntervalMs)) return undefined;
    this.lastUnknownKidReload = at;
    await this.reload();
    return this.key(kid);
  }

  /** RFC 7517 JWK Set of every published key, newest first. */
  jwks(): JsonWebKeySet {
    const at = Date.now();
    return {
      keys: [...this.keys.values()]
        .filter((k) => isPublished(k, at))
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
        .map((k) => ({ ...k.jwk, kid: k.kid, use: 'sig', alg: k.alg })),
    };
  }

  /** Every stored key, newest first (for `keys list`). */
  async list(): Promise<SigningKeyInfo[]> {
    const rows = await this.db
      .selectFrom('oauth_signing_keys')
      .select(['kid', 'alg', 'status', 'created_at', 'retired_at'])
      .orderBy('created_at', 'desc')
      .execute();
    const at = Date.now();
    return rows.map((r) => {
      const info = {
        kid: r.kid,
        alg: r.alg,
        status: r.status,
        createdAt: r.created_at,
        retiredAt: r.retired_at,
      };
      return { ...info, published: isPublished(info, at) };
    });
  }

  private async load(): Promise<void> {
    const cutoff = new Date(Date.now() - KEY_RETENTION_SECONDS * 1000).toISOString();
    const rows = await this.db
      .selectFrom('oauth_signing_keys')
      .select(['kid', 'alg', 'public_jwk', 'status', 'created_at', 'retired_at'])
      .where((eb) => eb.or([eb('status', '=', 'active'), eb('retired_at', '>=', cutoff)]))
      .execute();
    const next = new Map<string, PublicSigningKey>();
    for (const row of rows) {
      const known = this.keys.get(row.kid);
      const jwk = known?.jwk ?? JSON.parse(row.public_jwk);
      next.set(row.kid, {
        kid: row.kid,
        alg: row.alg,
        jwk,
        publicKey: known?.publicKey ?? createPublicKey({ key: jwk, format: 'jwk' }),
        status: row.status,
        createdAt: row.created_at,
        retiredAt: row.retired_at,
      });
    }
    const activeRow = rows.find((r) => r.status === 'active');
    if (activeRow && activeRow.kid !== this.active?.kid)
      this.active = await this.openActive(activeRow.kid, next);
    if (!activeRow) this.active = undefined;
    this.keys = next;
  }

  private async openActive(kid: string, keys: Map<string, PublicSigningKey>): Promise<ActiveSigningKey> {
    const { private_key } = await this.db
      .selectFrom('oauth_signing_keys')
      .select('private_key')
      .where('kid', '=', kid)
      .executeTakeFirstOrThrow();
    const key = keys.get(kid)!;
    return {
      ...key,
      privateKey: createPrivateKey(this.sealer.open(private_key, aadOf(kid))),
      encodedHeader: encodeHeader({ alg: key.alg, typ: ACCESS_TOKEN_TYP, kid }),
    };
  }

  private activeRow() {
    return this.db
      .selectFrom('oauth_signing_keys')
      .select('kid')
      .where('status', '=', 'active')
      .executeTakeFirst();
  }

  private async newKeyRow(): Promise<SigningKeysTable> {
    const alg = this.options.alg;
    const { publicKey, privateKey } =
      alg === 'ES256'
        ? await generateKeyPairAsync('ec', { namedCurve: 'P-256' })
        : await generateKeyPairAsync('rsa', { modulusLength: 2048 });
    const jwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
    const kid = jwkThumbprint(jwk);
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    return {
      kid,
      alg,
      public_jwk: JSON.stringify(jwk),
      private_key: this.sealer.seal(pem, aadOf(kid)),
      status: 'active',
      created_at: now(),
      retired_at: null,
    };
  }
}

function isPublished(key: { status: string; retiredAt: string | null }, at: number): boolean {
  if (key.status === 'active') return true;
  return key.retiredAt !== null && Date.parse(key.retiredAt) + KEY_RETENTION_SECONDS * 1000 > at;
}
