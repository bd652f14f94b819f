import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { SealedColumn } from '../crypto/sealed-columns.ts';
import { SealedSecret } from '../crypto/sealed-secret.ts';
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

/** The pepper takes part in master-key rotation (crypto/sealed-columns.ts; listed by the composition root). */
export const PEPPER_SEALED_COLUMN: SealedColumn = {
  table: 'oauth_peppers',
  column: 'sealed',
  key: 'version',
  associatedData: (row) => aadOf(Number(row.version)),
};

export class SecretDigester {
  private readonly pepper: SealedSecret;
  /** A digest to compare against when the client id is unknown, so both paths cost the same (no timing oracle). */
  private decoy?: Buffer;

  constructor(db: Kysely<Database>, sealer: Sealer) {
    this.pepper = new SealedSecret(sealer, {
      what: 'oauth pepper',
      associatedData: aadOf(PEPPER_VERSION),
      encoding: 'base64url',
      readSealed: async () =>
        (
          await db
            .selectFrom('oauth_peppers')
            .select('sealed')
            .where('version', '=', PEPPER_VERSION)
            .executeTakeFirst()
        )?.sealed,
      insertIfAbsent: async (sealed) => {
        await db
          .insertInto('oauth_peppers')
          .values({ version: PEPPER_VERSION, sealed, created_at: now() })
          .onConflict((oc) => oc.column('version').doNothing())
          .execute();
      },
    });
  }

  readonly version = PEPPER_VERSION;

  async digest(secret: string): Promise<string> {
    return this.hmac(await this.pepper.load(), secret).toString('base64url');
  }

  /** Constant-time comparison of a presented secret with a stored digest (`undefined`: unknown client). */
  async matches(secret: string, storedDigest: string | undefined): Promise<boolean> {
    const pepper = await this.pepper.load();
    const presented = this.hmac(pepper, secret);
    const stored = storedDigest === undefined ? undefined : Buffer.from(storedDigest, 'base64url');
    this.decoy ??= this.hmac(pepper, 'decoy');
    const expected = stored && stored.length === presented.length ? stored : this.decoy;
    return timingSafeEqual(presented, expected) && stored !== undefined;
  }

  /**
   * Compares a presented secret with each of a client's stored digests (rotation: several may be live) and returns
   * the index of the one that matches, or -1. One HMAC, every comparison constant-time and always all of them.
   */
  async matchesAny(secret: string, storedDigests: readonly (string | undefined)[]): Promise<number> {
    const pepper = await this.pepper.load();
    const presented = this.hmac(pepper, secret);
    this.decoy ??= this.hmac(pepper, 'decoy');
    let found = -1;
    storedDigests.forEach((digest, index) => {
      const stored = digest === undefined ? undefined : Buffer.from(digest, 'base64url');
      const expected = stored && stored.length === presented.length ? stored : this.decoy!;
      if (timingSafeEqual(presented, expected) && stored !== undefined && found === -1) found = index;
    });
    return found;
  }

  private hmac(pepper: Buffer, secret: string): Buffer {
    return createHmac('sha256', pepper).update(secret, 'utf8').digest();
  }
}
