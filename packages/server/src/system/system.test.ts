import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  type ConnectedVisitor,
  connectVisitor,
  createConversation,
  createSlowEmployee,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
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
      // No company cache: a test below breaks acme's row behind the service's back (as no caller could) to make its
      // requests fail, and a node that kept the row would not notice (packages/server/src/companies/company-cache.ts).
      ({ server, acme, globex, agent, acmeId } = await startPortalWorld(database, {
        config: { companyCacheSize: 0 },
      }));
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

    it("lists the company's own warnings and errors, without their texts; node-wide ones and other companies' stay out", async () => {
      server.ctx.logger.info('nothing to see');
      class BrokerError extends Error {}
      // A line of a request that authenticated as acme (logging/request-company.ts binds company_id).
      server.ctx.logger
        .child({ company_id: acmeId })
        .warn(
          { module: 'test', err: new BrokerError('visitor wrote secret-ish words') },
          'announce failed; retrying',
        );
      server.ctx.logger.warn({ module: 'test' }, 'node-wide trouble');
      const { body } = await acme.get('/system');
      const [latest] = body.recent_errors;
      assert.deepEqual(
        { level: latest.level, message: latest.message, module: latest.module, code: latest.code },
        { level: 'warn', message: 'announce failed; retrying', module: 'test', code: 'BrokerError' },
      );
      assert.ok(!JSON.stringify(body.recent_errors).includes('secret-ish'));
      const messages = (errors: Array<{ message: string }>) => errors.map((e) => e.message);
      assert.ok(!messages(body.recent_errors).includes('nothing to see'));
      assert.ok(!messages(body.recent_errors).includes('node-wide trouble'), 'node-wide lines are nobody’s');
      assert.deepEqual(messages((await globex.get('/system')).body.recent_errors), []);
    });

    it('attributes an error to the company its request authenticated as; a caller’s request id plants nothing elsewhere', async () => {
      // acme's company row made unreadable: every request that loads acme fails with a 500 it logs.
      const { allowed_origins } = await server.ctx.store.db
        .selectFrom('companies')
        .select('allowed_origins')
        .where('id', '=', acmeId)
        .executeTakeFirstOrThrow();
      const setOrigins = (value: string) =>
        server.ctx.store.db
          .updateTable('companies')
          .set({ allowed_origins: value })
          .where('id', '=', acmeId)
          .execute();
      await setOrigins('not json');
      try {
        const own = await acme.request('GET', '/company', undefined, {
          headers: { 'x-request-id': 'acme-own-error' },
        });
        assert.equal(own.status, 500);
        // Anyone may name acme in X-Company (the SDK's header) and choose a request id: not acme's error.
        const planted = await http(`${server.baseUrl}/sdk/v1/conversations`, {
          headers: { ...newVisitor(acmeId).headers, 'x-request-id': 'planted-by-stranger' },
        });
        assert.equal(planted.status, 500);
        const unknownRoute = await http(`${server.baseUrl}/no/such/route`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': 'planted-on-no-route' },
          body: `${'['.repeat(4000)}${']'.repeat(4000)}`,
        });
        assert.equal(unknownRoute.status, 400);
      } finally {
        await setOrigins(allowed_origins);
      }
      const ids = (res: { body: { recent_errors: Array<{ request_id: string | null }> } }) =>
        res.body.recent_errors.map((e) => e.request_id);
      const acmeView = ids(await acme.get('/system'));
      assert.ok(acmeView.includes('acme-own-error'), JSON.stringify(acmeView));
      assert.ok(!acmeView.includes('planted-by-stranger') && !acmeView.includes('planted-on-no-route'));
      const globexView = ids(await globex.get('/system'));
      assert.ok(
        !globexView.some((id) => id === 'acme-own-error' || id?.startsWith('planted')),
        JSON.stringify(globexView),
      );
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
  const ACME = '00000000-0000-4000-8000-00000000000a';
  const GLOBEX = '00000000-0000-4000-8000-00000000000b';

  it('keeps each company’s warnings and errors with their constant message and code, newest first, and nothing else', () => {
    const errors = new RecentErrors();
    const line = (record: Record<string, unknown>) => errors.recordLine(JSON.stringify(record));
    line({ level: 30, time: '2026-01-01T00:00:00.000Z', msg: 'request completed', company_id: ACME });
    line({
      level: 40,
      time: '2026-01-01T00:00:01.000Z',
      msg: 'announce failed; retrying',
      module: 'webchat',
      company_id: ACME,
      err: { type: 'BrokerError', message: 'redis: not connected; visitor said "my card is 4111"' },
    });
    line({
      level: 50,
      time: '2026-01-01T00:00:02.000Z',
      msg: 'boom',
      request_id: 'req-1',
      company_id: ACME,
      err: { code: 'ECONNRESET' },
    });
    line({ level: 50, msg: 'globex trouble', company_id: GLOBEX });
    line({ level: 50, msg: 'node-wide', request_id: 'chosen-by-a-caller' });
    errors.recordLine('not json');
    assert.deepEqual(errors.list(ACME), [
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
    assert.deepEqual(
      errors.list(GLOBEX).map((e) => e.message),
      ['globex trouble'],
    );
    assert.ok(!JSON.stringify(errors.list(ACME)).includes('4111'), 'error texts are left out');
    assert.ok(!JSON.stringify([errors.list(ACME), errors.list(GLOBEX)]).includes('node-wide'));
  });

  it('holds the last 50 of each company only', () => {
    const errors = new RecentErrors();
    for (let i = 0; i < 60; i++)
      errors.recordLine(JSON.stringify({ level: 50, msg: `e${i}`, company_id: ACME }));
    errors.recordLine(JSON.stringify({ level: 50, msg: 'other', company_id: GLOBEX }));
    const kept = errors.list(ACME);
    assert.equal(kept.length, 50);
    assert.equal(kept[0]!.message, 'e59');
    assert.equal(kept.at(-1)!.message, 'e10');
    assert.equal(errors.list(GLOBEX).length, 1, 'a noisy company pushes out no other company’s entries');
  });
});
