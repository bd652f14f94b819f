import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { registerSealedColumn } from '../crypto/sealed-columns.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { now } from '../storage/columns.ts';
import type { Database } from '../storage/schema.ts';

/**
 * Associated data of a sealed connector key. Binding company, connector and key version means a ciphertext copied
 * to another connector, another company or another version of the same connector fails to open (research/oauth-m2m.md
 * §5, the AWS KMS "encryption context" idea).
 */
export const connectorKeyAad = (companyId: string, connectorId: string, keyVersion: number): string =>
  `connector-key|${companyId}|${connectorId}|${keyVersion}`;

const secretAad = (name: string): string => `integration-secret|${name}`;

// Both sealed columns of this capability take part in master-key rotation (crypto/sealed-columns.ts).
registerSealedColumn({
  table: 'connectors',
  column: 'api_key_sealed',
  key: 'id',
  context: ['company_id', 'key_version'],
  associatedData: (row) => connectorKeyAad(String(row.company_id), String(row.id), Number(row.key_version)),
});
registerSealedColumn({
  table: 'integration_secrets',
  column: 'sealed',
  key: 'name',
  associatedData: (row) => secretAad(String(row.name)),
});

const FINGERPRINT_SECRET = 'connector-key-fingerprint';
const FINGERPRINT_PREFIX = 'fp1.';

/**
 * Keyed fingerprints of connector keys, stored beside the ciphertext so a repeated PUT of the current key is
 * recognised without opening the stored key. HMAC-SHA256 under a random 256-bit secret that is itself sealed in
 * `integration_secrets` (created once, shared by every node through the database): a database dump alone cannot be
 * used to test guesses against the fingerprints. The connector's company and id are part of the MAC input, so the
 * same key on two connectors gives unrelated fingerprints.
 */
export class KeyFingerprinter {
  private secret?: Promise<Buffer>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sealer: Sealer,
  ) {}

  async fingerprint(companyId: string, connectorId: string, apiKey: string): Promise<string> {
    const mac = createHmac('sha256', await this.loadSecret())
      .update(`${companyId}|${connectorId}|`)
      .update(apiKey, 'utf8')
      .digest('base64url');
    return FINGERPRINT_PREFIX + mac;
  }

  /** Constant-time comparison of a stored fingerprint with a freshly computed one. */
  static equal(stored: string | null, computed: string): boolean {
    if (!stored?.startsWith(FINGERPRINT_PREFIX)) return false;
    const a = Buffer.from(stored);
    const b = Buffer.from(computed);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  private loadSecret(): Promise<Buffer> {
    // The secret never changes once created (master-key rotation re-wraps it without changing it): cache it.
    this.secret ??= this.readOrCreateSecret().catch((err) => {
      this.secret = undefined;
      throw err;
    });
    return this.secret;
  }

  private async readOrCreateSecret(): Promise<Buffer> {
    const existing = await this.readSecret();
    if (existing) return existing;
    // Several nodes may race to create it: the primary key keeps the first, and everyone reads that one back.
    await this.db
      .insertInto('integration_secrets')
      .values({
        name: FINGERPRINT_SECRET,
        sealed: this.sealer.seal(randomBytes(32).toString('base64'), secretAad(FINGERPRINT_SECRET)),
        created_at: now(),
      })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const created = await this.readSecret();
    if (!created) throw new Error('connector fingerprint secret could not be created');
    return created;
  }

  private async readSecret(): Promise<Buffer | undefined> {
    const row = await this.db
      .selectFrom('integration_secrets')
      .select('sealed')
      .where('name', '=', FINGERPRINT_SECRET)
      .executeTakeFirst();
    return row
      ? Buffer.from(this.sealer.open(row.sealed, secretAad(FINGERPRINT_SECRET)), 'base64')
      : undefined;
  }
}
