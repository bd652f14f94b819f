import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process (a CLI command or a second server on the same folder) won the race: use its secret.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      return { secret: readFileSync(file, 'utf8').trim(), generated: false };
    throw err;
  }
  chmodSync(file, 0o600);
  return { secret, generated: true };
}
