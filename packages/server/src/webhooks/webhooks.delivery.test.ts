import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { createConnector, testKey } from '@parley/testing/integrations/connectors-fixtures';
import { createTestClient, fetchToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  connectToNewConversation,
  createCompanyWithSlowEmployee,
  createConversation,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import {
  api,
  startWebhookSink,
  verifyDelivery,
  type WebhookSink,
  webhookTenant,
} from '@parley/testing/webhooks/webhook-sink';
import { EVENT_TYPES } from '../events/domain-events.ts';
import { WebhookDispatcher } from './dispatcher.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The deliveries stored for an endpoint, once none is pending. The outbox stores one per event and endpoint in the
 * event's own transaction, so this is everything the endpoint will ever be sent; and a delivery is marked only
 * after the endpoint answered, so by then every copy sent has arrived.
 */
function settledDeliveries(server: TestServer, endpointId: string) {
  return waitFor('every delivery settled', async () => {
    const rows = await server.ctx.store.db
      .selectFrom('webhook_deliveries')
      .select(['type', 'status'])
      .where('endpoint_id', '=', endpointId)
      .execute();
    return rows.length > 0 && rows.every((r) => r.status !== 'pending') && rows;
  });
}

// Deliveries end to end (docs/webhooks.md "Deliveries"): real changes record events, the dispatcher POSTs them to a
// local sink, and the `standardwebhooks` package — an implementation independent of ours — verifies signatures.
for (const database of TEST_DATABASES) {
  describe(`webhook deliveries (${database})`, () => {
    let server: TestServer;
    let sink: WebhookSink;
    before(async () => {
      server = await startTestServer({ database });
      sink = await startWebhookSink();
    });
    after(async () => {
      await server.close();
      await sink.close();
    });

    /** A tenant with a webhook on `url` for `events`, and a connector whose key rotations are events. */
    async function subscribed(url: string, events: string[] = ['connector.api_key_rotated']) {
      const tenant = await webhookTenant(server);
      const created = await api(server, tenant.auth, 'POST', '', { url, events });
      assert.equal(created.status, 201, created.text);
      const connector = await createConnector(server, tenant.companyId, {
        name: 'crm',
        url: 'http://127.0.0.1:9/',
      });
      const rotate = (apiKey = testKey('rot')) =>
        server.ctx.connectors.rotateKey(
          { companyId: tenant.companyId, connectorId: connector.id, apiKey },
          { actor: 'cli' },
        );
      return { tenant, webhook: created.body as { id: string; secret: string }, connector, rotate };
    }

    it('delivers a signed event the standardwebhooks package verifies, without the rotated key', async () => {
      const { tenant, webhook, connector, rotate } = await subscribed(sink.url);
      const key = testKey('secret-key');
      const rotation = await rotate(key);
      const [event] = await waitFor('the delivery', () => {
        const found = sink
          .events('connector.api_key_rotated')
          .filter((e) => e.company_id === tenant.companyId);
        return found.length > 0 && found;
      });
      assert.ok(event);
      assert.deepEqual(verifyDelivery(webhook.secret, event), JSON.parse(event.body));
      assert.equal(event.id, event.headers['webhook-id']);
      assert.match(event.id, /^msg_/);
      assert.deepEqual(event.data, { connector_id: connector.id, key_version: rotation.keyVersion });
      assert.ok(Math.abs(Number(event.headers['webhook-timestamp']) - Date.now() / 1000) < 30);
      assert.equal(event.headers['content-type'], 'application/json');
      assert.ok(!event.body.includes(key), 'the key is never in the payload');
      assert.ok(!JSON.stringify(event.headers).includes(key));
      const signatures = String(event.headers['webhook-signature']).split(' ');
      assert.equal(signatures.length, 1);
      assert.throws(() => verifyDelivery(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, event));

      const deliveries = await waitFor('delivered status', async () => {
        const res = await api(server, tenant.auth, 'GET', `/${webhook.id}/deliveries`);
        return res.body.deliveries[0]?.status === 'delivered' && res.body.deliveries;
      });
      assert.deepEqual(deliveries, [
        {
          id: deliveries[0].id,
          event_id: event.id,
          type: 'connector.api_key_rotated',
          status: 'delivered',
          attempts: 1,
          last_status_code: 200,
          next_attempt_at: null,
        },
      ]);
      const stored = await server.ctx.store.db.selectFrom('webhook_events').select('body').execute();
      assert.ok(!stored.some((row) => row.body.includes(key)), 'nor in the outbox');
    });

    it('retries with the same webhook-id after a 500, within 30 s', async () => {
      const flaky = await startWebhookSink();
      try {
        flaky.answer = (_r, index) => (index === 0 ? 500 : 204);
        const { tenant, webhook, rotate } = await subscribed(flaky.url);
        await rotate();
        await waitFor('the retry', () => flaky.received.length >= 2, 30_000);
        const [first, second] = flaky.received;
        assert.equal(first!.headers['webhook-id'], second!.headers['webhook-id']);
        assert.equal(first!.body, second!.body);
        verifyDelivery(webhook.secret, first!);
        verifyDelivery(webhook.secret, second!);
        const gap = second!.at - first!.at;
        assert.ok(gap >= 4_000 && gap < 30_000, `first retry after ${gap} ms`);
        const deliveries = await waitFor('delivered status', async () => {
          const res = await api(server, tenant.auth, 'GET', `/${webhook.id}/deliveries`);
          return res.body.deliveries[0]?.status === 'delivered' && res.body.deliveries;
        });
        assert.equal(deliveries[0].attempts, 2);
        assert.equal(deliveries[0].last_status_code, 204);
        assert.equal(flaky.received.length, 2, 'delivered once it was answered with a 2xx');
      } finally {
        await flaky.close();
      }
    });

    it('signs with both secrets after a rotation; each verifies on its own', async () => {
      const own = await startWebhookSink();
      try {
        const { tenant, webhook, rotate } = await subscribed(own.url);
        const rotated = await api(server, tenant.auth, 'POST', `/${webhook.id}/secret`);
        await rotate();
        await waitFor('the delivery', () => own.received.length >= 1);
        const [received] = own.received;
        assert.equal(String(received!.headers['webhook-signature']).split(' ').length, 2);
        verifyDelivery(webhook.secret, received!);
        verifyDelivery(rotated.body.secret, received!);
        // The old secret only while it is less than 24 h old: move its expiry to the past.
        await server.ctx.store.db
          .updateTable('webhook_endpoints')
          .set({ previous_secret_expires_ms: Date.now() - 1 })
          .where('id', '=', webhook.id)
          .execute();
        await rotate();
        await waitFor('the second delivery', () => own.received.length >= 2);
        const later = own.received[1]!;
        assert.equal(String(later.headers['webhook-signature']).split(' ').length, 1);
        verifyDelivery(rotated.body.secret, later);
        assert.throws(() => verifyDelivery(webhook.secret, later));
      } finally {
        await own.close();
      }
    });

    it('never sends with a stored secret moved from another endpoint; the log names the webhook, not a secret', async () => {
      const ownA = await startWebhookSink();
      const ownB = await startWebhookSink();
      try {
        const a = await subscribed(ownA.url);
        const b = await subscribed(ownB.url);
        // B's secret signs a delivery first, so this process has opened its envelope once already.
        await b.rotate();
        await waitFor("B's delivery", () => ownB.received.length >= 1);
        const { secret_sealed } = await server.ctx.store.db
          .selectFrom('webhook_endpoints')
          .select('secret_sealed')
          .where('id', '=', b.webhook.id)
          .executeTakeFirstOrThrow();
        // Both are at secret version 1: only the endpoint in the associated data tells the envelopes apart.
        await server.ctx.store.db
          .updateTable('webhook_endpoints')
          .set({ secret_sealed })
          .where('id', '=', a.webhook.id)
          .execute();
        await a.rotate();
        const [delivery] = await waitFor('the failed attempt', async () => {
          const found = await server.ctx.webhooks.service.deliveries(a.tenant.companyId, a.webhook.id);
          return found[0]?.attempts === 1 && found;
        });
        assert.equal(delivery!.status, 'pending', 'retried, as the stored secret may be repaired');
        assert.equal(delivery!.last_status_code, 0);
        assert.equal(ownA.received.length, 0, "nothing is sent signed with another endpoint's key");
        const logged = server.logs.filter((line) => line.includes('failed its integrity check'));
        assert.ok(logged.some((line) => line.includes(a.webhook.id)));
        for (const secret of [a.webhook.secret, b.webhook.secret]) {
          const key = secret.slice('whsec_'.length);
          assert.ok(!server.logs.some((line) => line.includes(key)), 'no secret in the logs');
        }
      } finally {
        await ownA.close();
        await ownB.close();
      }
    });

    it('reports conversation and message changes, each once, with the message snapshot', async () => {
      const own = await startWebhookSink();
      try {
        const tenant = await webhookTenant(server);
        const created = await api(server, tenant.auth, 'POST', '', {
          url: own.url,
          events: [...EVENT_TYPES],
        });
        const { id: conversationId } = await createConversation(server, newVisitor(tenant.companyId));
        const { commands, feedback } = server.ctx.webchat;
        const actor = { id: 'cli' };
        const agentMessage = await commands.post(
          tenant.companyId,
          conversationId,
          { blocks: [{ type: 'markdown', content: 'Hello from Ann' }], author: { id: 'ann', name: 'Ann' } },
          actor,
        );
        await commands.handback(tenant.companyId, conversationId, actor);
        await commands.handback(tenant.companyId, conversationId, actor);
        const conversation = await commands.close(tenant.companyId, conversationId, actor);
        await commands.close(tenant.companyId, conversationId, actor);
        await feedback.rateMessage(conversation, agentMessage.id, { rating: 'up', comment: 'nice' });
        await feedback.rateConversation(conversation, { score: 5 });

        const types = [
          'conversation.created',
          'conversation.handed_over',
          'conversation.handed_back',
          'conversation.closed',
          'message.feedback',
          'conversation.csat',
        ];
        await waitFor(
          'every event',
          () => types.every((t) => own.events(t).length > 0) && own.events('message.created').length >= 4,
        );
        const stored = await settledDeliveries(server, created.body.id);
        for (const type of types) assert.equal(own.events(type).length, 1, type);
        for (const type of [...types, 'message.created']) {
          const count = stored.filter((d) => d.type === type).length;
          assert.equal(own.events(type).length, count, `${type}: each stored delivery arrived once`);
        }
        for (const e of own.events()) {
          verifyDelivery(created.body.secret, e);
          assert.equal(e.data.conversation_id, conversationId);
        }
        assert.equal(own.events('conversation.handed_over')[0]!.data.agent, 'Ann');
        assert.deepEqual(own.events('conversation.csat')[0]!.data, {
          conversation_id: conversationId,
          score: 5,
          comment: null,
        });
        assert.deepEqual(own.events('message.feedback')[0]!.data, {
          conversation_id: conversationId,
          message_id: agentMessage.id,
          rating: 'up',
          comment: 'nice',
        });
        const messages = own
          .events('message.created')
          .map((e) => e.data.message as { id: string; role: string });
        const agent = messages.find((m) => m.id === agentMessage.id);
        assert.deepEqual(agent, agentMessage, 'the stored snapshot');
        const roles = new Set(messages.map((m) => m.role));
        assert.ok(roles.has('agent') && roles.has('system'), `any role: ${[...roles]}`);
        assert.equal(new Set(messages.map((m) => m.id)).size, messages.length, 'each message once');
      } finally {
        await own.close();
      }
    });

    it("reports a visitor's message and the streamed reply once, when complete", async () => {
      const own = await startWebhookSink();
      try {
        const { company } = await createCompanyWithSlowEmployee(server, 'Streaming Co', {
          words: 6,
          delayMs: 20,
        });
        const client = await createTestClient(server.ctx, ['webhooks:write'], company.id);
        const auth = { authorization: `Bearer ${await fetchToken(server, client)}` };
        const endpoint = await api(server, auth, 'POST', '', { url: own.url, events: ['message.created'] });
        const { conversation, c } = await connectToNewConversation(server, newVisitor(company.id));
        try {
          await sendMessage(c.sub, 'Hello there');
          const messages = await waitFor('the reply', () => {
            const found = own.events('message.created').map((e) => e.data.message as Record<string, unknown>);
            return found.some((m) => m.role === 'digital_employee') && found;
          });
          const stored = await settledDeliveries(server, endpoint.body.id);
          assert.equal(stored.length, 2, 'the visitor message and the reply: nothing more will be sent');
          assert.equal(own.events('message.created').length, messages.length, 'nothing more arrived');
          const user = messages.find((m) => m.role === 'user');
          assert.ok(user, 'the visitor message');
          const [block] = user.blocks as Array<{ id: string }>;
          assert.deepEqual(user.blocks, [{ id: block!.id, type: 'markdown', content: 'Hello there' }]);
          const replies = messages.filter((m) => m.role === 'digital_employee');
          assert.equal(replies.length, 1, 'the reply once, not its partial snapshots');
          assert.equal(replies[0]!.status, 'complete');
          assert.equal(replies[0]!.conversation_id, conversation.id);
          assert.ok((replies[0]!.blocks as Array<{ type: string }>).some((b) => b.type === 'markdown'));
        } finally {
          c.close();
        }
      } finally {
        await own.close();
      }
    });

    it('fails a delivery after 24 h and disables an endpoint failing for 3 days (injected clock)', async () => {
      const down = await startWebhookSink();
      down.answer = () => 503;
      let offsetMs = 0;
      const dispatcher = new WebhookDispatcher(
        {
          db: server.ctx.store.db,
          dialect: server.ctx.store.dialect,
          sealer: server.ctx.sealer,
          audit: server.ctx.audit,
          logger: server.ctx.logger,
          fetch: (input, init) => fetch(input, init),
        },
        {
          nodeId: 'clocked',
          concurrency: 4,
          pollMs: 20,
          leaseMs: 60_000,
          timeoutMs: 2_000,
          clockOffsetMs: () => offsetMs,
        },
      );
      // Only this dispatcher sends in this test; the server's starts again afterwards for the other tests.
      await server.ctx.webhooks.drain(0);
      try {
        const { tenant, webhook, rotate } = await subscribed(down.url);
        await dispatcher.start({ alone: false });
        await rotate();
        await waitFor('the first attempt', () => down.received.length >= 1);
        const pending = await waitFor('the failed attempt recorded', async () => {
          const res = await api(server, tenant.auth, 'GET', `/${webhook.id}/deliveries`);
          return res.body.deliveries[0]?.attempts === 1 && res.body.deliveries[0];
        });
        assert.equal(pending.status, 'pending');
        assert.equal(pending.last_status_code, 503);
        const wait = Date.parse(pending.next_attempt_at) - Date.now();
        assert.ok(wait > 0 && wait <= 30_000, `the first retry is due within 30 s (${wait} ms)`);

        offsetMs = 3 * DAY_MS + 60_000;
        await waitFor('the attempt three days later', () => down.received.length >= 2);
        const listed = await waitFor('the endpoint disabled', async () => {
          const res = await api(server, tenant.auth, 'GET', '');
          const mine = res.body.webhooks.find((w: { id: string }) => w.id === webhook.id);
          return mine?.enabled === false && mine;
        });
        assert.ok(listed.disabled_at);
        const [delivery] = (await api(server, tenant.auth, 'GET', `/${webhook.id}/deliveries`)).body
          .deliveries;
        assert.equal(delivery.status, 'failed');
        assert.equal(delivery.next_attempt_at, null);
        const audit = await server.ctx.audit.list({ type: 'webhook.disabled', subject: webhook.id });
        assert.equal(audit.length, 1);
        assert.equal(audit[0]!.actor, 'system');
        const retry = await api(
          server,
          tenant.auth,
          'POST',
          `/${webhook.id}/deliveries/${delivery.id}/retry`,
        );
        assert.equal(retry.status, 409);
        assert.equal(retry.body.code, 'webhook_disabled');
        await rotate();
        // A disabled endpoint gets no delivery for a new event, so there is nothing to send; with the
        // dispatcher stopped (attempts in flight finished), nothing more reached it.
        const deliveries = (await api(server, tenant.auth, 'GET', `/${webhook.id}/deliveries`)).body
          .deliveries;
        assert.deepEqual(
          deliveries.map((d: { id: string }) => d.id),
          [delivery.id],
          'no delivery for the new event',
        );
        await dispatcher.stop();
        assert.equal(down.received.length, 2, 'nothing more is sent to a disabled endpoint');
      } finally {
        await dispatcher.stop();
        await down.close();
        await server.ctx.webhooks.serve();
      }
    });

    it('a delivery whose node stopped mid-attempt is sent by another node once its lease lapses', async () => {
      const hanging = await startWebhookSink();
      hanging.answer = (_r, index) => (index === 0 ? 0 : 200);
      const dispatcherWith = (nodeId: string, leaseMs: number) =>
        new WebhookDispatcher(
          {
            db: server.ctx.store.db,
            dialect: server.ctx.store.dialect,
            sealer: server.ctx.sealer,
            audit: server.ctx.audit,
            logger: server.ctx.logger,
            fetch: (input, init) => fetch(input, init),
          },
          { nodeId, concurrency: 4, pollMs: 20, leaseMs, timeoutMs: 10_000 },
        );
      const dying = dispatcherWith('dying', 400);
      const survivor = dispatcherWith('survivor', 60_000);
      await server.ctx.webhooks.drain(0);
      try {
        const { tenant, webhook, rotate } = await subscribed(hanging.url);
        await dying.start({ alone: false });
        await rotate();
        await waitFor('the first attempt', () => hanging.received.length >= 1);
        // The node goes away mid-attempt: nothing is recorded, its claim stays until the lease lapses.
        await dying.stop(0);
        await survivor.start({ alone: false });
        await waitFor('the attempt of the other node', () => hanging.received.length >= 2);
        const [first, second] = hanging.received;
        assert.equal(first!.headers['webhook-id'], second!.headers['webhook-id']);
        assert.ok(second!.at - first!.at >= 300, 'only after the lease lapsed');
        verifyDelivery(webhook.secret, second!);
        await waitFor('delivered', async () => {
          const [d] = await server.ctx.webhooks.service.deliveries(tenant.companyId, webhook.id);
          return d?.status === 'delivered' && d.attempts === 1;
        });
      } finally {
        await survivor.stop();
        await hanging.close();
        await server.ctx.webhooks.serve();
      }
    });

    it('deleting a webhook drops its pending deliveries, so nothing more is sent', async () => {
      const failing = await startWebhookSink();
      failing.answer = () => 500;
      try {
        const { tenant, webhook, rotate } = await subscribed(failing.url);
        await rotate();
        await waitFor('the first attempt', () => failing.received.length >= 1);
        const pending = () =>
          server.ctx.store.db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('endpoint_id', '=', webhook.id)
            .execute();
        assert.equal((await pending()).length, 1, 'pending, its retry due in 5 s');
        assert.equal((await api(server, tenant.auth, 'DELETE', `/${webhook.id}`)).status, 204);
        assert.deepEqual(await pending(), []);
      } finally {
        await failing.close();
      }
    });

    it('a manual retry sends a delivered event again with the same webhook-id (202)', async () => {
      const own = await startWebhookSink();
      try {
        const { tenant, webhook, rotate } = await subscribed(own.url);
        await rotate();
        const [delivery] = await waitFor('delivered', async () => {
          const res = await api(server, tenant.auth, 'GET', `/${webhook.id}/deliveries`);
          return res.body.deliveries[0]?.status === 'delivered' && res.body.deliveries;
        });
        const retry = await api(
          server,
          tenant.auth,
          'POST',
          `/${webhook.id}/deliveries/${delivery.id}/retry`,
        );
        assert.equal(retry.status, 202);
        await waitFor('the second receipt', () => own.received.length >= 2);
        assert.equal(own.received[0]!.headers['webhook-id'], own.received[1]!.headers['webhook-id']);
      } finally {
        await own.close();
      }
    });

    it('a manual retry leaves a delivery that a node is sending now to that attempt (202, no second one)', async () => {
      const { tenant, webhook, rotate } = await subscribed('http://127.0.0.1:9/never');
      await rotate();
      const delivery = await waitFor('a delivery', async () => {
        const res = await api(server, tenant.auth, 'GET', `/${webhook.id}/deliveries`);
        return res.body.deliveries[0];
      });
      // As a node holding the lease sees it: claimed by another node, its lease running for another minute.
      const leaseEnd = Date.now() + 60_000;
      await server.ctx.store.db
        .updateTable('webhook_deliveries')
        .set({ lease_owner: 'another-node', next_attempt_at: leaseEnd })
        .where('id', '=', delivery.id)
        .execute();
      const retry = await api(server, tenant.auth, 'POST', `/${webhook.id}/deliveries/${delivery.id}/retry`);
      assert.equal(retry.status, 202);
      const row = await server.ctx.store.db
        .selectFrom('webhook_deliveries')
        .select(['lease_owner', 'next_attempt_at'])
        .where('id', '=', delivery.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        { owner: row.lease_owner, until: Number(row.next_attempt_at) },
        { owner: 'another-node', until: leaseEnd },
      );
    });
  });

  describe(`webhook deliveries across a restart (${database})`, () => {
    it('an event stored by a process that stopped before sending it arrives from the next one', async () => {
      const sink = await startWebhookSink();
      const owner = await startTestServer({ database });
      await owner.ctx.webhooks.drain(0);
      try {
        const first = await startTestServer({ database, shareWith: owner });
        await first.ctx.webhooks.drain(0);
        const tenant = await webhookTenant(first);
        const created = await api(first, tenant.auth, 'POST', '', {
          url: sink.url,
          events: ['conversation.created'],
        });
        const { id } = await createConversation(first, newVisitor(tenant.companyId));
        await first.close();
        assert.equal(sink.received.length, 0);

        const next = await startTestServer({ database, shareWith: owner });
        try {
          const [event] = await waitFor('the delivery', () => sink.received.length > 0 && sink.events());
          assert.equal(event!.type, 'conversation.created');
          assert.equal(event!.data.conversation_id, id);
          verifyDelivery(created.body.secret, event!);
        } finally {
          await next.close();
        }
      } finally {
        await owner.close();
        await sink.close();
      }
    });
  });
}
