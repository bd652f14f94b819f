import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type PortalTestClient, startPortalWorld } from '../portal-api/testing/portal-fixtures.ts';
import { TEST_DATABASES } from '../testing/databases.ts';
import type { TestServer } from '../testing/test-server.ts';
import { waitFor } from '../testing/wait.ts';
import {
  type ConnectedVisitor,
  connectVisitor,
  createConversation,
  createSlowEmployee,
  newVisitor,
  sendMessage,
} from '../webchat/testing/webchat-fixtures.ts';
import { RecentErrors } from './recent-errors.ts';

for (const database of TEST_DATABASES) {
  describe(`portal system view (${database})`, () => {
    let server: TestServer;
    let acme: PortalTestClient;
    let globex: PortalTestClient;
    let agent: PortalTestClient;
    let visitor: ConnectedVisitor | undefined;
    let acmeId: string;
    before(async () => {
      ({ server, acme, globex, agent, acmeId } = await startPortalWorld(database));
      const slow = await createSlowEmployee(server, acmeId, { words: 60, delayMs: 100 });
      await server.ctx.digitalEmployees.setDefault(acmeId, slow.id);
      const v = newVisitor(acmeId);
      visitor = await connectVisitor(server, v, await createConversation(server, v));
    });
    after(async () => {
      visitor?.close();
      await server.close();
    });

    it('shows this node with its connections and subscriptions, to admins only', async () => {
      const res = await acme.get('/system');
      assert.equal(res.status, 200);
      const self = res.body.nodes.find((n: { this_node: boolean }) => n.this_node);
      assert.ok(self, 'the answering node is listed');
      assert.equal(self.id, server.ctx.webchat.realtime.nodeId);
      assert.ok(self.clients >= 1 && self.subscriptions >= 1, JSON.stringify(self));
      assert.equal(res.body.totals.nodes, res.body.nodes.length);
      assert.ok(res.body.totals.clients >= self.clients);
      assert.equal((await agent.get('/system')).status, 403, 'agents see no system view');
    });

    it("counts the company's replies streaming and waiting, and no other company's", async () => {
      await sendMessage(visitor!.sub, 'first');
      await sendMessage(visitor!.sub, 'second');
      const busy = await waitFor('a reply streaming and one waiting', async () => {
        const { body } = await acme.get('/system');
        return body.replies.streaming === 1 && body.replies.queued === 1 && body;
      });
      assert.deepEqual(busy.replies, { streaming: 1, queued: 1 });
      assert.deepEqual((await globex.get('/system')).body.replies, { streaming: 0, queued: 0 });
    });

    it("shows the company's webhook backlog and its failing endpoints", async () => {
      // Port 9 (discard) refuses on loopback: every attempt fails, so the delivery stays pending.
      await server.ctx.webhooks.service.create(
        acmeId,
        { url: 'http://127.0.0.1:9/hook', events: ['conversation.created'] },
        { actor: 'user:test', ip: '127.0.0.1' },
      );
      const v = newVisitor(acmeId);
      await createConversation(server, v);
      const backlog = await waitFor('a failing endpoint with a pending delivery', async () => {
        const { body } = await acme.get('/system');
        return body.webhooks.pending >= 1 && body.webhooks.failing_endpoints === 1 && body.webhooks;
      });
      assert.equal(backlog.disabled_endpoints, 0);
      assert.ok(Date.parse(backlog.oldest_pending_at) <= Date.now());
      assert.deepEqual((await globex.get('/system')).body.webhooks, {
        pending: 0,
        oldest_pending_at: null,
        failing_endpoints: 0,
        disabled_endpoints: 0,
      });
    });
  });
}

describe('recent errors kept for the system view', () => {
  it('keeps warnings and errors with their constant message and code, newest first, and nothing else', () => {
    const errors = new RecentErrors();
    const line = (record: Record<string, unknown>) => errors.recordLine(JSON.stringify(record));
    line({ level: 30, time: '2026-01-01T00:00:00.000Z', msg: 'request completed' });
    line({
      level: 40,
      time: '2026-01-01T00:00:01.000Z',
      msg: 'announce failed; retrying',
      module: 'webchat',
      err: { type: 'BrokerError', message: 'redis: not connected; visitor said "my card is 4111"' },
    });
    line({
      level: 50,
      time: '2026-01-01T00:00:02.000Z',
      msg: 'boom',
      request_id: 'req-1',
      err: { code: 'ECONNRESET' },
    });
    errors.recordLine('not json');
    assert.deepEqual(errors.list(), [
      {
        at: '2026-01-01T00:00:02.000Z',
        level: 'error',
        message: 'boom',
        module: null,
        code: 'ECONNRESET',
        request_id: 'req-1',
      },
      {
        at: '2026-01-01T00:00:01.000Z',
        level: 'warn',
        message: 'announce failed; retrying',
        module: 'webchat',
        code: 'BrokerError',
        request_id: null,
      },
    ]);
    assert.ok(!JSON.stringify(errors.list()).includes('4111'), 'error texts are left out');
  });

  it('holds the last 50 only', () => {
    const errors = new RecentErrors();
    for (let i = 0; i < 60; i++) errors.recordLine(JSON.stringify({ level: 50, msg: `e${i}` }));
    const kept = errors.list();
    assert.equal(kept.length, 50);
    assert.equal(kept[0]!.message, 'e59');
    assert.equal(kept.at(-1)!.message, 'e10');
  });
});
