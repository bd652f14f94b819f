// A private PostgreSQL cluster for one fault run, created with the Debian/Ubuntu postgresql-common tools on a free
// port with trust authentication, so the suite may stop, restart and terminate it at will. The shared cluster on
// 5432 is never touched: every command names this cluster's version and name.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { freePort } from '@parley/testing/process';
import pg from 'pg';
import { onCleanup } from './cleanup.ts';
import { requireCommands, run } from './commands.ts';

const DATABASE = 'parley';

/** The installed PostgreSQL major versions (`/etc/postgresql/<version>`), newest first. */
function installedVersion(): string {
  let versions: string[] = [];
  try {
    versions = readdirSync('/etc/postgresql').filter((v) => /^\d+(\.\d+)?$/.test(v));
  } catch {
    // reported below
  }
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest)
    throw new Error('no PostgreSQL installation under /etc/postgresql (apt-get install postgresql)');
  return newest;
}

export class PrivatePostgres {
  private releaseCleanup: () => void = () => {};

  private constructor(
    readonly version: string,
    readonly name: string,
    readonly port: number,
  ) {}

  /** Creates the cluster, starts it and creates Parley's database; dropped again by the cleanup handlers. */
  static async create(): Promise<PrivatePostgres> {
    requireCommands({
      psql: 'postgresql-client',
      pg_createcluster: 'postgresql-common',
      pg_ctlcluster: 'postgresql-common',
      pg_dropcluster: 'postgresql-common',
    });
    const cluster = new PrivatePostgres(
      installedVersion(),
      `parley_fault_${randomBytes(4).toString('hex')}`,
      await freePort(),
    );
    // Registered before creation: a half-created cluster is dropped too.
    cluster.releaseCleanup = onCleanup(
      `PostgreSQL cluster ${cluster.name}`,
      () => cluster.drop(),
      () => {
        spawnSync('pg_dropcluster', ['--stop', cluster.version, cluster.name], { timeout: 30_000 });
      },
    );
    await run('pg_createcluster', [
      cluster.version,
      cluster.name,
      '-p',
      String(cluster.port),
      '--',
      '--auth=trust',
    ]);
    await cluster.start();
    await cluster.psql('postgres', `create database ${DATABASE}`);
    return cluster;
  }

  /** What Parley's DATABASE_URL points at. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${DATABASE}`;
  }

  /** Starts the cluster; resolves once it accepts connections (pg_ctl waits). */
  async start(): Promise<void> {
    await run('pg_ctlcluster', ['--skip-systemctl-redirect', this.version, this.name, 'start']);
  }

  /** Stops the cluster; `fast` disconnects every session and shuts down cleanly (pg_ctl -m fast). */
  async stop(mode: 'fast' | 'smart' | 'immediate' = 'fast'): Promise<void> {
    await run('pg_ctlcluster', ['--skip-systemctl-redirect', this.version, this.name, 'stop', '-m', mode]);
  }

  /** Terminates every backend connected to Parley's database (what a failover or an admin's kill does). */
  async terminateBackends(): Promise<number> {
    const out = await this.psql(
      'postgres',
      `select count(*) from (select pg_terminate_backend(pid) from pg_stat_activity
         where datname = '${DATABASE}' and pid <> pg_backend_pid()) t`,
    );
    return Number(out.trim());
  }

  /** One query on Parley's database over a fresh connection (the suite's own reads, never a node's pool). */
  async query<R extends object>(text: string, params: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      return (await client.query<R>(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  /** Stops and deletes the cluster with its data. */
  async drop(): Promise<void> {
    this.releaseCleanup();
    await run('pg_dropcluster', ['--stop', this.version, this.name]);
  }

  private psql(database: string, sql: string): Promise<string> {
    return run('psql', [
      '-h',
      '127.0.0.1',
      '-p',
      String(this.port),
      '-U',
      'postgres',
      '-d',
      database,
      '-Atc',
      sql,
    ]);
  }
}
