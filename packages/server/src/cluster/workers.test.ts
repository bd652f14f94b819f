import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { get } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { testPostgresUrl, testRedisUrl } from '@parley/testing/databases';
import { freePort, type ServerProcess, startServerProcess } from '@parley/testing/process';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';

/** The JSON log lines of the cluster's output (the primary's and every worker's). */
function logLines(server: ServerProcess): Array<Record<string, unknown>> {
  return server
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const servingPids = (server: ServerProcess) =>
  logLines(server)
    .filter((line) => line.msg === 'parley is serving')
    .map((line) => line.pid as number);

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A request on a connection of its own (no keep-alive), so the primary hands each one to the next worker. */
const readyStatus = (baseUrl: string) =>
  new Promise<number>((resolve, reject) => {
    get(`${baseUrl}/readyz`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });

/**
 * A worker is a process started from the sources: on a busy machine its start (tsx, the store, Redis, listen)
 * takes far longer than the 15 s waitFor gives by default. The same bound as startServerProcess's own start.
 */
const WORKER_START_MS = 90_000;

describe('PARLEY_WORKERS: one port, several worker processes (PostgreSQL + Redis)', () => {
  let migrated: TestServer;
  let cluster: ServerProcess;
  let metricsPort: number;
  before(async () => {
    // An in-process node migrates the schema and owns the data folder; the workers join it as further nodes.
    const prefix = `workers-${randomBytes(4).toString('hex')}`;
    migrated = await startTestServer({
      database: 'postgres',
      redis: true,
      config: { webchat: { realtimeRedisPrefix: `${prefix}:rt` }, rateLimit: { keyPrefix: `${prefix}:rl:` } },
    });
    const database = new URL(testPostgresUrl());
    database.searchParams.set('options', `-c search_path=${migrated.schema}`);
    metricsPort = await freePort();
    cluster = await startServerProcess({
      PARLEY_WORKERS: '2',
      PARLEY_METRICS_PORT: String(metricsPort),
      DATABASE_URL: database.toString(),
      REDIS_URL: testRedisUrl(),
      PARLEY_DATA_DIR: migrated.dataDir,
      PARLEY_REALTIME_REDIS_PREFIX: `${prefix}:rt`,
      PARLEY_RATE_LIMIT_PREFIX: `${prefix}:rl:`,
      LOG_LEVEL: 'info',
    });
  });
  after(async () => {
    await cluster?.stop('SIGKILL');
    await migrated?.close();
  });

  it('shares the port between the workers, and replaces a worker killed with -9', async () => {
    const first = await waitFor(
      'two workers serving',
      () => servingPids(cluster).length >= 2 && servingPids(cluster),
      WORKER_START_MS,
    );
    assert.equal(new Set(first).size, 2);
    assert.ok(!first.includes(cluster.child.pid!), 'the primary serves nothing itself');

    for (let i = 0; i < 12; i++) assert.equal(await readyStatus(cluster.baseUrl), 200);
    const answeredBy = new Set(
      logLines(cluster)
        .filter(
          (line) => line.msg === 'request completed' || line.msg === 'request' || line.req !== undefined,
        )
        .map((line) => line.worker),
    );
    assert.deepEqual([...answeredBy].sort(), [1, 2], 'both workers answered requests');

    // One scrape of the primary's metrics port adds up every worker's figures.
    const scrape = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const readyzAnswers = scrape
      .split('\n')
      .filter((line) => line.startsWith('parley_http_requests_total{') && line.includes('route="/readyz"'))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    assert.ok(readyzAnswers >= 12, `the /readyz answers of both workers are counted (saw ${readyzAnswers})`);
    assert.match(scrape, /^parley_realtime_clients /m);

    const [victim] = first as [number, number];
    process.kill(victim, 'SIGKILL');
    const replacement = await waitFor(
      'a replacement worker',
      () => {
        const pids = servingPids(cluster);
        return pids.length >= 3 && pids.at(-1);
      },
      WORKER_START_MS,
    );
    assert.ok(!first.includes(replacement));
    assert.ok(
      logLines(cluster).some(
        (line) => line.msg === 'a worker stopped unexpectedly; starting another' && line.pid === victim,
      ),
      'the death was logged with the worker it took',
    );
    for (let i = 0; i < 6; i++) assert.equal(await readyStatus(cluster.baseUrl), 200);
  });

  it('drains every worker on SIGTERM, and the primary exits 0 once they have', async () => {
    const pids = servingPids(cluster).filter(isAlive);
    assert.equal(pids.length, 2);
    assert.equal(await cluster.stop('SIGTERM'), 0);
    const lines = logLines(cluster);
    assert.equal(
      lines.filter((line) => line.msg === 'shutting down').length >= 2,
      true,
      'each worker drained',
    );
    assert.ok(lines.some((line) => line.msg === 'every worker has stopped'));
    for (const pid of pids) assert.equal(isAlive(pid), false, `worker ${pid} has exited`);
  });
});
