// The system under test of the disk-full scenario: one Parley node on SQLite (the default store, no DATABASE_URL or
// REDIS_URL), its data folder on a small tmpfs the suite mounts — so the disk really fills up — and unmounts again.
// Mounting needs root, like creating PostgreSQL clusters does.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '@parley/testing/process';
import { mountTmpfs, type Tmpfs } from '@parley/testing/tmpfs';
import SQLite from 'better-sqlite3';
import { onCleanup } from './cleanup.ts';
import { ARTIFACTS } from './cluster.ts';
import { childEnv } from './environment.ts';
import { readStoredMessages } from './figures.ts';
import { ParleyNode } from './parley-node.ts';
import { type Seeded, seed } from './seed.ts';
import type { StoredReader } from './settle.ts';

export interface SqliteSystem {
  node: ParleyNode;
  /** The file system the node's data folder is on. */
  disk: Tmpfs;
  seeded: Seeded;
  artifacts: string;
  /** Reads the company's stored messages from the database file (read-only, beside the node). */
  readStored: StoredReader;
}

export async function startSqliteNode(options: { run: string; diskMiB: number }): Promise<SqliteSystem> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const artifacts = join(ARTIFACTS, `${options.run}-${stamp}`);
  mkdirSync(artifacts, { recursive: true });
  const disk = mountTmpfs(options.diskMiB, 'parley-fault-disk-');
  onCleanup(
    `tmpfs ${disk.dir}`,
    async () => disk.unmount(),
    () => disk.unmount(),
  );
  const dataDir = join(disk.dir, 'data');
  const port = await freePort();
  const env = childEnv({
    HOST: '127.0.0.1',
    PARLEY_PUBLIC_URL: `http://127.0.0.1:${port}`,
    PARLEY_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    PARLEY_REALTIME_TOKEN_SECRET: randomBytes(32).toString('hex'),
    PARLEY_MASTER_KEYS: `1:${randomBytes(32).toString('base64')}`,
    // As in cluster.ts: the visitors all come from 127.0.0.1.
    PARLEY_WEBCHAT_MESSAGES_PER_MINUTE_PER_IP: '1000000',
    PARLEY_WEBCHAT_CONVERSATIONS_PER_MINUTE_PER_IP: '1000000',
    PARLEY_MAX_CONNECTIONS_PER_ADDRESS: '1000000',
  });
  const seeded = await seed(env);
  const node = new ParleyNode({ name: 'node-a', port, env, logFile: join(artifacts, 'node-a.log') });
  await node.start();
  const db = new SQLite(join(dataDir, 'parley.db'), { readonly: true, fileMustExist: true });
  onCleanup('read-only database connection', async () => {
    db.close();
  });
  const query = async <R extends object>(text: string, params: unknown[] = []): Promise<R[]> =>
    db.prepare(text.replace(/\$\d+/g, '?')).all(...params) as R[];
  return { node, disk, seeded, artifacts, readStored: () => readStoredMessages({ query }, seeded.companyId) };
}
