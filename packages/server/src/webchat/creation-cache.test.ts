import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { newVisitor, sdkGet, sdkPost } from '@parley/testing/webchat/webchat-fixtures';

/**
 * What a conversation's creation reads about its company comes from each node's cache
 * (packages/server/src/companies/company-cache.ts): every change is seen by the next creation, on the node that made
 * it and on the other nodes sharing the store.
 */

const ORIGIN = 'https://shop.example';

/** A new conversation on `server` and the greeting it was opened with (text and author), if any. */
async function open(server: TestServer, companyId: string, headers: Record<string, string> = {}) {
  const v = newVisitor(companyId);
  Object.assign(v.headers, headers);
  const res = await sdkPost(server, v, '/conversations');
  if (res.status !== 201) return { status: res.status, code: res.body?.code as string | undefined };
  const messages = await sdkGet(server, v, `/conversations/${res.body.id}/messages`);
  const greeting = messages.body.messages.find((m: { role: string }) => m.role === 'digital_employee');
  return {
    status: res.status,
    employeeId: res.body.digital_employee_id as string,
    greeting: greeting?.blocks[0]?.content as string | undefined,
    author: greeting?.author?.name as string | undefined,
  };
}

/** Runs the changes on `writer` and the creations on `reader` (the same node, or another one), after `settle`. */
function changesAreSeen(
  nodes: () => { writer: TestServer; reader: TestServer },
  settle: (changes: number) => Promise<void>,
) {
  it('a new default digital employee, an edit of its greeting and name, and a removal', async () => {
    const { writer, reader } = nodes();
    const company = await writer.ctx.companies.create('Cache Co');
    const first = await writer.ctx.digitalEmployees.getDefault(company.id);
    await writer.ctx.digitalEmployees.update(company.id, first.id, {
      settings: { greeting: 'Hello from Ava' },
    });
    await settle(1);
    // Warm: the reader now holds the company and its default employee.
    assert.equal((await open(reader, company.id)).greeting, 'Hello from Ava');
    const hitsBefore = reader.ctx.companies.cache.stats.hits;
    const warm = await open(reader, company.id);
    assert.equal(warm.employeeId, first.id);
    assert.ok(
      reader.ctx.companies.cache.stats.hits > hitsBefore,
      'the second creation was served from memory',
    );

    await writer.ctx.digitalEmployees.update(company.id, first.id, {
      name: 'Ava Renamed',
      settings: { greeting: 'Welcome back' },
    });
    await settle(1);
    const edited = await open(reader, company.id);
    assert.equal(edited.greeting, 'Welcome back');
    assert.equal(edited.author, 'Ava Renamed');

    const second = await writer.ctx.digitalEmployees.create({
      companyId: company.id,
      name: 'Bo',
      responder: 'builtin',
      settings: { greeting: 'Bo here' },
      isDefault: true,
    });
    await settle(1);
    const routed = await open(reader, company.id);
    assert.equal(routed.employeeId, second.id);
    assert.equal(routed.greeting, 'Bo here');

    await writer.ctx.digitalEmployees.setDefault(company.id, first.id);
    await writer.ctx.digitalEmployees.remove(company.id, second.id);
    await settle(2);
    const back = await open(reader, company.id);
    assert.equal(back.employeeId, first.id);
    assert.equal(back.greeting, 'Welcome back');
  });

  it('the company’s allowed origins: admitted once listed, refused once taken off', async () => {
    const { writer, reader } = nodes();
    const company = await writer.ctx.companies.create('Origins Co');
    assert.equal((await open(reader, company.id, { origin: ORIGIN })).code, 'origin_not_allowed');
    await writer.ctx.companies.setAllowedOrigins(company.id, [ORIGIN]);
    await settle(1);
    assert.equal((await open(reader, company.id, { origin: ORIGIN })).status, 201);
    assert.equal((await open(reader, company.id, { origin: ORIGIN })).status, 201);
    await writer.ctx.companies.setAllowedOrigins(company.id, []);
    await settle(1);
    assert.equal((await open(reader, company.id, { origin: ORIGIN })).code, 'origin_not_allowed');
  });

  it('a webhook endpoint added is in the event of every conversation created after the add was answered', async () => {
    const { writer, reader } = nodes();
    const company = await writer.ctx.companies.create('Hooks Co');
    const deliveries = async () =>
      (
        await reader.ctx.store.db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('company_id', '=', company.id)
          .execute()
      ).length;
    // Warm: the reader now holds the company's (empty) list of enabled endpoints.
    await open(reader, company.id);
    await open(reader, company.id);
    assert.equal(await deliveries(), 0);

    const { webhook } = await writer.ctx.webhooks.service.create(
      company.id,
      { url: 'https://hooks.example/parley', events: ['conversation.created'] },
      { actor: 'test' },
    );
    // No settling: the add was answered once every node was told (webhooks/outbox.ts).
    await open(reader, company.id);
    assert.equal(await deliveries(), 1, 'the conversation created after the add has its delivery');

    await writer.ctx.webhooks.service.delete(company.id, webhook.id, { actor: 'test' });
    await settle(1);
    await open(reader, company.id);
    assert.equal(await deliveries(), 0, 'the delete took the delivery, and the next creation added none');
  });
}

describe('creation cache, one node (SQLite)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });
  changesAreSeen(
    () => ({ writer: server, reader: server }),
    async () => {},
  );
});

describe('creation cache, two nodes (PostgreSQL + Redis)', () => {
  let nodeA: TestServer;
  let nodeB: TestServer;
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const shared = {
    webchat: { realtimeRedisPrefix: `${prefix}:rt` },
    rateLimit: { keyPrefix: `${prefix}:rl:` },
  };
  let heard = 0;
  before(async () => {
    nodeA = await startTestServer({ database: 'postgres', redis: true, config: shared });
    nodeB = await startTestServer({ database: 'postgres', redis: true, config: shared, shareWith: nodeA });
  });
  after(async () => {
    await nodeB.close();
    await nodeA.close();
  });
  changesAreSeen(
    () => ({ writer: nodeA, reader: nodeB }),
    // Node A's change answered once it told the others; node B acts on it when its subscription delivers it.
    async (changes) => {
      const expected = heard + changes;
      await waitFor('node B to hear the change', () => nodeB.ctx.companies.cache.stats.heard >= expected);
      heard = nodeB.ctx.companies.cache.stats.heard;
    },
  );

  it('node B serves from memory only while it hears node A', async () => {
    const company = await nodeA.ctx.companies.create('Live Co');
    const hits = nodeB.ctx.companies.cache.stats.hits;
    await open(nodeB, company.id);
    await open(nodeB, company.id);
    assert.ok(nodeB.ctx.companies.cache.stats.hits > hits);
  });
});
