import type { SealedColumn } from '../crypto/sealed-columns.ts';

/**
 * Associated data of a sealed webhook secret: company, endpoint and secret version, so a ciphertext moved to
 * another endpoint or version fails to open (the same idea as integrations/connector-key.ts).
 */
export const webhookSecretAad = (companyId: string, endpointId: string, version: number): string =>
  `webhook-secret|${companyId}|${endpointId}|${version}`;

/** Both secret columns take part in master-key rotation (listed by the composition root, context.ts). */
export const WEBHOOK_SEALED_COLUMNS: SealedColumn[] = [
  {
    table: 'webhook_endpoints',
    column: 'secret_sealed',
    key: 'id',
    context: ['company_id', 'secret_version'],
    associatedData: (row) =>
      webhookSecretAad(String(row.company_id), String(row.id), Number(row.secret_version)),
  },
  {
    table: 'webhook_endpoints',
    column: 'previous_secret_sealed',
    key: 'id',
    context: ['company_id', 'secret_version'],
    associatedData: (row) =>
      webhookSecretAad(String(row.company_id), String(row.id), Number(row.secret_version) - 1),
  },
];
