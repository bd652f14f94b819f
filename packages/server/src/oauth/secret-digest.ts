import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { registerSealedColumn } from '../crypto/sealed-columns.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { now } from '../storage/columns.ts';
import type { Database } from '../storage/schema.ts';

/**
 * Client secrets are stored as HMAC-SHA256(pepper, secret), never in the clear.
 *
 * Why a fast keyed hash and not bcrypt/argon2: slow KDFs protect low-entropy human passwords. Our secrets are
 * 256-bit random values, which no offline search can find whatever the hash, while a slow KDF would cap the token
 * endpoint at tens of grants per second per core (Hydra #1478, Zitadel #6540). HMAC costs ~2 µs.
 *
 * Why a dedicated stored pepper and not a key derived from the master key: the pepper is 32 random bytes kept in
 * `oauth_peppers`, sealed by the `Sealer` under the master key. A dump of the database alone is useless (the pepper
 * cannot be opened without the master key, which lives outside the database), and master-key rotation only
 * re-wraps the sealed pepper — digests derived straight from a master key would all break at every rotation.
 * `pepper_version` on each client leaves room for a pepper rotation later.
 */
export const PEPPER_VERSION = 1;
const aadOf = (version: number) => `oauth_pepper|${version}`;

// The pepper takes part in master-key rotation (crypto/sealed-columns.ts).
registerSealedColumn({
  table: 'oauth_peppers',
  column: 'sealed',
  key: 'version',
  associatedData: (row) => aadOf(Number(row.version)),
});

export class SecretDigester {
  private pepper?: Promise<Buffer>;
  /** A digest to compare against when the client id is unknown, so both paths cost the same (no timing oracle). */
  private decoy?: Buffer;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sealer: Sealer,
  ) {}

  readonly version = PEPPER_VERSION;

  async digest(secret: string): Promise<string> {
    return this.hmac(await this.loadPepper(), secret).toString('base64url');
  }

  /** Constant-time comparison of a presented secret with a stored digest (`undefined`: unknown client). */
  async matches(secret: string, storedDigest: string | undefined): Promise<boolean> {
    const pepper = await this.loadPepper();
    const presented = this.hmac(pepper, secret);
    const stored = storedDigest === undefined ? undefined : Buffer.from(storedDigest, 'base64url');
    this.decoy ??= this.hmac(pepper, 'decoy');
    const expected = stored && stored.length === presented.length ? stored : this.decoy;
    return timingSafeEqual(presented, expected) && stored !== undefined;
  }

  private hmac(pepper: Buffer, secret: string): Buffer {
    return createHmac('sha256', pepper).update(secret, 'utf8').digest();
  }

  private loadPepper(): Promise<Buffer> {
    this.pepper ??= this.loadOrCreate().catch((err) => {
      this.pepper = undefined;
      throw err;
    });
    return this.pepper;
  }

  /** The first process to need the pepper creates it; concurrent creators (several nodes) keep the first row. */
  private async loadOrCreate(): Promise<Buffer> {
    const existing = await this.read();
    if (existing) return existing;
    const sealed = this.sealer.seal(randomBytes(32).toString('base64url'), aadOf(PEPPER_VERSION));
    await this.db
      .insertInto('oauth_peppers')
      .values({ version: PEPPER_VERSION, sealed, created_at: now() })
      .onConflict((oc) => oc.column('version').doNothing())
      .execute();
    const created = await this.read();
    if (!created) throw new Error('oauth pepper could not be stored');
    return created;
  }

  private async read(): Promise<Buffer | undefined> {
    const row = await this.db
      .selectFrom('oauth_peppers')
      .select('sealed')
      .where('version', '=', PEPPER_VERSION)
      .executeTakeFirst();
    return row && Buffer.from(this.sealer.open(row.sealed, aadOf(PEPPER_VERSION)), 'base64url');
  }
}
