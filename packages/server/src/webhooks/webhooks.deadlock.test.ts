import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { testPostgresUrl } from '@parley/testing/databases';
import { createConnector, testKey } from '@parley/testing/integrations/connectors-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { api, webhookTenant } from '@parley/testing/webhooks/webhook-sink';
import pg from 'pg';
import { createLogger } from '../logging/logger.ts';
import { WebhookDispatcher } from './dispatcher.ts';

/**
 * Deleting an endpoint while the dispatcher records the outcome of one of its deliveries (PostgreSQL). The delete
 * locks the endpoint row, then its deliveries (ON DELETE CASCADE); the outcome write used to lock the delivery, then
 * the endpoint (`failing_since_ms`): a deadlock, one of them rolled back with 40P01. The interleaving is forced: a
 * third connection holds the delivery's row lock until both are queued behind it, then lets go.
 */
describe('webhooks: deleting an endpoint while its outcome is written (PostgreSQL)', () => {
  let server: TestServer;
  let locker: pg.Client;
  let lockerPid: number;
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let requests = 0;
  const receiver = createServer(async (req, res) => {
    for await (const _ of req);
    requests += 1;
    await gate;
    res.writeHead(500).end('failing');
  });
  before(async () => {
    server = await startTestServer({ database: 'postgres' });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    locker = new pg.Client({ connectionString: testPostgresUrl() });
    await locker.connect();
    await locker.query(`SET search_path TO ${server.schema}`);
    lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  });
  after(async () => {
    release();
    await locker.end().catch(() => {});
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await server.close();
  });

  /** Backends waiting, directly or through another waiter, for the locker's transaction. */
  async function queuedBehindLocker(): Promise<number> {
    const { rows } = await locker.query<{ pid: number; blockers: number[] }>(
      'SELECT pid, pg_blocking_pids(pid) AS blockers FROM pg_stat_activity WHERE cardinality(pg_blocking_pids(pid)) > 0',
    );
    const behind = new Set<number>([lockerPid]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const r of rows)
        if (!behind.has(r.pid) && r.blockers.some((b) => behind.has(b))) {
          behind.add(r.pid);
          grew = true;
        }
    }
    return behind.size - 1;
  }

  it('both finish: the delete answers 204 and the outcome is not lost to a deadlock', async () => {
    const warnings: string[] = [];
    const logger = createLogger('warn', {
      write: (line: string) => void warnings.push(JSON.parse(line).msg as string),
    });
    const dispatcher = new WebhookDispatcher(
      {
        db: server.ctx.store.db,
        dialect: server.ctx.store.dialect,
        sealer: server.ctx.sealer,
        audit: server.ctx.audit,
        logger,
        fetch: (input, init) => fetch(input, init),
      },
      { nodeId: 'deadlock', concurrency: 4, pollMs: 20, leaseMs: 60_000, timeoutMs: 30_000 },
    );
    // Only this dispatcher sends.
    await server.ctx.webhooks.drain(0);
    try {
      const tenant = await webhookTenant(server);
      const { port } = receiver.address() as AddressInfo;
      const created = await api(server, tenant.auth, 'POST', '', {
        url: `http://127.0.0.1:${port}/hooks`,
        events: ['connector.api_key_rotated'],
      });
      assert.equal(created.status, 201, created.text);
      const webhookId = (created.body as { id: string }).id;
      const connector = await createConnector(server, tenant.companyId, {
        name: 'crm',
        url: 'http://127.0.0.1:9/',
      });
      await dispatcher.start({ alone: false });
      await server.ctx.connectors.rotateKey(
        { companyId: tenant.companyId, connectorId: connector.id, apiKey: testKey('rot') },
        { actor: 'cli' },
      );
      await waitFor('the attempt to reach the receiver', () => requests >= 1);

      await locker.query('BEGIN');
      await locker.query('SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 FOR UPDATE', [webhookId]);
      release(); // the receiver answers 500: the dispatcher writes the failed attempt and the endpoint's failing_since
      await waitFor(
        'the outcome write to queue behind the locker',
        async () => (await queuedBehindLocker()) >= 1,
      );
      const deleting = api(server, tenant.auth, 'DELETE', `/${webhookId}`);
      await waitFor('the delete to queue as well', async () => (await queuedBehindLocker()) >= 2);
      await locker.query('COMMIT');

      const deleted = await deleting;
      assert.equal(deleted.status, 204, deleted.text);
      await dispatcher.stop(0);
      assert.deepEqual(
        warnings.filter((w) => w.startsWith('could not record webhook delivery outcomes')),
        [],
        'the outcome write was not rolled back',
      );
      const left = await server.ctx.store.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('endpoint_id', '=', webhookId)
        .execute();
      assert.deepEqual(left, [], 'the deliveries went with the endpoint');
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await dispatcher.stop(0);
    }
  });
});
