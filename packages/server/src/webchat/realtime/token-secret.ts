import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSecretFileOnce } from '../../crypto/secret-file.ts';

export const TOKEN_SECRET_FILE = 'realtime-token-secret';

export interface LoadedTokenSecret {
  secret: string;
  /** True when this call generated the secret into the data folder (logged as a warning). */
  generated: boolean;
}

/**
 * The HS256 secret of connection and subscription tokens: from config when set, else from the data folder,
 * generated there (mode 0600) on first start like the master key, so a single node needs no setup. Several nodes
 * must share it (PARLEY_REALTIME_TOKEN_SECRET or a shared data folder).
 */
export function loadTokenSecret(configured: string | undefined, dataDir: string): LoadedTokenSecret {
  if (configured) return { secret: configured, generated: false };
  const file = join(dataDir, TOKEN_SECRET_FILE);
  if (existsSync(file)) return { secret: readFileSync(file, 'utf8').trim(), generated: false };
  const secret = randomBytes(32).toString('base64url');
  // Another process (a worker, a CLI command or a second server on the same folder) may win the race: use its secret.
  if (!createSecretFileOnce(file, `${secret}\n`))
    return { secret: readFileSync(file, 'utf8').trim(), generated: false };
  return { secret, generated: true };
}
