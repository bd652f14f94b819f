import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testPostgresUrl } from '@parley/testing/databases';
import { freePort } from '@parley/testing/process';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import pg from 'pg';
import { isStoreUnavailable } from './store-errors.ts';

// PostgreSQL dropping a node's connections (a failover, a restart, pg_terminate_backend: SQLSTATE 57P01) must not
// end the process, and the node must carry on by itself. Only this server's own sessions are terminated; the
// shared PostgreSQL stays up for every other test. (Outages of a whole private cluster are in faults/.)
describe('store connections dropped by PostgreSQL', () => {
  let server: TestServer;
  const admin = new pg.Client({ connectionString: testPostgresUrl() });
  before(async () => {
    server = await startTestServer({ database: 'postgres' });
    await admin.connect();
  });
  after(async () => {
    await admin.end();
    await server.close();
  });

  /** Terminates every session of this server (its pool names them `parley:<schema>`); returns how many. */
  async function terminateSessions(): Promise<number> {
    const { rows } = await admin.query(
      'select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = $1',
      [`parley:${server.schema}`],
    );
    return rows.length;
  }

  it('survives its idle connections being terminated and serves the next requests without a restart', async () => {
    // Fill the pool with idle connections first: their termination is what used to be an uncaught 'error'.
    await Promise.all(Array.from({ length: 5 }, () => fetch(`${server.baseUrl}/readyz`)));
    assert.ok((await terminateSessions()) > 0, 'the server had sessions to lose');
    // The pool has noticed (it logs each lost idle connection) before the next requests go out.
    await waitFor('the pool to notice', () =>
      server.logs.some((line) => line.includes('a pooled database connection failed')),
    );
    const answers: number[] = [];
    for (let i = 0; i < 5; i++) answers.push((await fetch(`${server.baseUrl}/readyz`)).status);
    assert.equal(answers.at(-1), 200, `ready again (answers: ${answers.join(', ')})`);
    const company = await server.ctx.companies.create('Still Here Co');
    assert.equal((await server.ctx.companies.find(company.id))?.id, company.id);
    assert.ok(
      server.logs.some((line) => line.includes('a pooled database connection failed')),
      'the loss was logged, not thrown',
    );
  });

  it('answers 503 store_unavailable with Retry-After, never 500, while its connections keep being cut', async () => {
    const company = await server.ctx.companies.create('Flaky Co');
    const headers = { 'x-session-id': crypto.randomUUID(), 'x-company': company.id };
    let cutting = true;
    const cutter = (async () => {
      while (cutting) {
        await terminateSessions();
        await new Promise((resolve) => setTimeout(resolve, 2)); // the pace of the cuts, not a wait for anything
      }
    })();
    const answers: Response[] = [];
    try {
      for (let i = 0; i < 60; i++) {
        const batch = await Promise.all(
          Array.from({ length: 5 }, () => fetch(`${server.baseUrl}/sdk/v1/conversations`, { headers })),
        );
        answers.push(...batch);
        if (answers.some((res) => res.status === 503) && i >= 10) break;
      }
    } finally {
      cutting = false;
      await cutter;
    }
    const statuses = answers.map((res) => res.status);
    assert.ok(!statuses.includes(500), `no internal errors (saw ${[...new Set(statuses)].join(', ')})`);
    const refused = answers.find((res) => res.status === 503);
    assert.ok(refused, `some requests lost their connection (saw ${[...new Set(statuses)].join(', ')})`);
    assert.equal((await refused.json()).code, 'store_unavailable');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    // A connection cut just before the cuts stopped may still sit idle in the pool until its socket closes: that one
    // request answers 503 too. Serving resumes within the contract's 2 s, without a restart.
    await waitFor(
      'serving again once the cuts stop',
      async () => (await fetch(`${server.baseUrl}/sdk/v1/conversations`, { headers })).status === 200,
      2_000,
    );
  });

  it('classifies real connection failures as unavailable, and a wrong query as not', async () => {
    const refused = new pg.Client({
      host: '127.0.0.1',
      port: await freePort(),
      connectionTimeoutMillis: 2_000,
    });
    const refusal = await refused.connect().then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(isStoreUnavailable(refusal), String(refusal));
    const victim = new pg.Client({ connectionString: testPostgresUrl() });
    victim.on('error', () => {});
    await victim.connect();
    const terminated = await victim.query('select pg_terminate_backend(pg_backend_pid())').then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(isStoreUnavailable(terminated), String(terminated));
    const wrong = await admin.query('select * from no_such_table').then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.equal(isStoreUnavailable(wrong), false);
    await victim.end().catch(() => {});
  });
});
