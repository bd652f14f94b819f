import type { SealedColumn } from '../../crypto/sealed-columns.ts';
import { identitySecretAad } from './identity-secret.ts';

/** Both sealed identity-secret columns take part in master-key rotation (listed by the composition root). */
export const IDENTITY_SEALED_COLUMNS: SealedColumn[] = [
  {
    table: 'channels',
    column: 'identity_secret',
    key: 'id',
    context: ['company_id'],
    associatedData: (row) => identitySecretAad(String(row.company_id), String(row.id), 'current'),
  },
  {
    table: 'channels',
    column: 'identity_previous_secret',
    key: 'id',
    context: ['company_id'],
    associatedData: (row) => identitySecretAad(String(row.company_id), String(row.id), 'previous'),
  },
];
