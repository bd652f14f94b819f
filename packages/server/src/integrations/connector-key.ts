import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { SealedColumn } from '../crypto/sealed-columns.ts';
import { SealedSecret } from '../crypto/sealed-secret.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { now } from '../storage/columns.ts';
import type { Database } from '../storage/schema.ts';

/**
 * Associated data of a sealed connector key. Binding company, connector and key version means a ciphertext copied
 * to another connector, another company or another version of the same connector fails to open (the idea of AWS
 * KMS's "encryption context": authenticated data that must match at decryption).
 */
export const connectorKeyAad = (companyId: string, connectorId: string, keyVersion: number): string =>
  `connector-key|${companyId}|${connectorId}|${keyVersion}`;

const secretAad = (name: string): string => `integration-secret|${name}`;

/**
 * Connector keys and the fingerprint secret take part in master-key rotation (crypto/sealed-columns.ts; listed by
 * the composition root, context.ts).
 */
export const CONNECTOR_SEALED_COLUMNS: SealedColumn[] = [
  {
    table: 'connectors',
    column: 'api_key_sealed',
    key: 'id',
    context: ['company_id', 'key_version'],
    associatedData: (row) => connectorKeyAad(String(row.company_id), String(row.id), Number(row.key_version)),
  },
  {
    table: 'integration_secrets',
    column: 'sealed',
    key: 'name',
    associatedData: (row) => secretAad(String(row.name)),
  },
];

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
  private readonly secret: SealedSecret;

  constructor(db: Kysely<Database>, sealer: Sealer) {
    this.secret = new SealedSecret(sealer, {
      what: 'connector fingerprint secret',
      associatedData: secretAad(FINGERPRINT_SECRET),
      encoding: 'base64',
      readSealed: async () =>
        (
          await db
            .selectFrom('integration_secrets')
            .select('sealed')
            .where('name', '=', FINGERPRINT_SECRET)
            .executeTakeFirst()
        )?.sealed,
      insertIfAbsent: async (sealed) => {
        await db
          .insertInto('integration_secrets')
          .values({ name: FINGERPRINT_SECRET, sealed, created_at: now() })
          .onConflict((oc) => oc.column('name').doNothing())
          .execute();
      },
    });
  }

  async fingerprint(companyId: string, connectorId: string, apiKey: string): Promise<string> {
    const mac = createHmac('sha256', await this.secret.load())
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
}
