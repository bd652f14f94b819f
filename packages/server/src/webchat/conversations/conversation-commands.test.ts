import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { testPostgresUrl, testRedisUrl } from '@parley/testing/databases';
import { createUsers, signInClient } from '@parley/testing/portal/portal-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import {
  bearer,
  connectToNewConversation,
  createConversation,
  fetchPlatformToken,
  newVisitor,
} from '@parley/testing/webchat/webchat-fixtures';
import { runCli } from '../../cli/main.ts';

// One module for what agents do (post, handover, hand back, close), whoever acts: the platform API, the portal
// inbox and the CLI give the same results and leave the same audit events. PostgreSQL + Redis, so the CLI (its own
// process context) reaches a visitor connected to the server through the shared broker.
describe('conversation commands from every boundary (PostgreSQL + Redis)', () => {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  let server: TestServer;
  let companyId: string;
  before(async () => {
    server = await startTestServer({
      database: 'postgres',
      redis: true,
      config: { webchat: { realtimeRedisPrefix: `${prefix}:rt` }, rateLimit: { keyPrefix: `${prefix}:rl:` } },
    });
    companyId = (await server.ctx.companies.create('Commands Co')).id;
    await createUsers(server, companyId, { 'sam@commands.test': 'agent' });
  });
  after(() => server.close());

  /** The CLI in this process with the server's configuration (same schema, Redis prefix, data folder). */
  async function parley(...args: string[]): Promise<{ code: number; json: Record<string, unknown> }> {
    const database = new URL(testPostgresUrl());
    database.searchParams.set('options', `-c search_path=${server.schema}`);
    const env = {
      ...process.env,
      PARLEY_DATA_DIR: server.dataDir,
      DATABASE_URL: database.toString(),
      REDIS_URL: testRedisUrl(),
      PARLEY_REALTIME_REDIS_PREFIX: `${prefix}:rt`,
      PARLEY_RATE_LIMIT_PREFIX: `${prefix}:rl:`,
      LOG_LEVEL: 'silent',
    };
    const lines: string[] = [];
    const code = await runCli([...args, '--json'], (line) => lines.push(line), { env });
    return { code, json: JSON.parse(lines.at(-1) ?? '{}') };
  }

  const auditOf = async (conversationId: string) =>
    (await server.ctx.audit.list({ companyId, subject: conversationId }))
      .map((e) => [e.type, e.actor?.replace(/:.*/, ':…')])
      .reverse();

  it('records the same audit events for the same actions, whoever acts', async () => {
    const token = await fetchPlatformToken(server, companyId, ['conversations:write']);
    const portal = await signInClient(server, 'sam@commands.test');
    const viaApi = await createConversation(server, newVisitor(companyId));
    const viaPortal = await createConversation(server, newVisitor(companyId));
    const viaCli = await createConversation(server, newVisitor(companyId));

    const api = (path: string, body: unknown = {}) =>
      fetch(`${server.baseUrl}/platform/v1/conversations/${viaApi.id}/${path}`, bearer(token, body));
    assert.equal((await api('handover')).status, 200);
    assert.equal((await api('messages', { blocks: [{ type: 'markdown', content: 'Hello' }] })).status, 201);
    assert.equal((await api('handback')).status, 200);
    assert.equal((await api('close')).status, 200);

    const inbox = (path: string, body: unknown = {}) =>
      portal.request('POST', `/inbox/conversations/${viaPortal.id}/${path}`, body);
    assert.equal((await inbox('handover')).status, 200);
    assert.equal((await inbox('messages', { content: 'Hello' })).status, 201);
    assert.equal((await inbox('handback')).status, 200);
    assert.equal((await inbox('close')).status, 200);

    const target = ['--company', companyId, '--conversation', viaCli.id];
    assert.equal((await parley('conversations', 'handover', ...target)).code, 0);
    assert.equal((await parley('conversations', 'post', ...target, '--text', 'Hello')).code, 0);
    assert.equal((await parley('conversations', 'handback', ...target)).code, 0);
    assert.equal((await parley('conversations', 'close', ...target)).code, 0);

    const types = [
      'conversation.handed_over',
      'conversation.agent_message_posted',
      'conversation.handed_back',
      'conversation.closed',
    ];
    assert.deepEqual(
      await auditOf(viaApi.id),
      types.map((t) => [t, 'client:…']),
    );
    assert.deepEqual(
      await auditOf(viaPortal.id),
      types.map((t) => [t, 'user:…']),
    );
    assert.deepEqual(
      await auditOf(viaCli.id),
      types.map((t) => [t, 'cli']),
    );
  });

  it('refuses what the API refuses, with the same codes (validation, another company, a closed conversation)', async () => {
    const token = await fetchPlatformToken(server, companyId, ['conversations:write']);
    const other = (await server.ctx.companies.create('Other Co')).id;
    const theirs = await createConversation(server, newVisitor(other));
    const ours = await createConversation(server, newVisitor(companyId));

    const blank = await fetch(
      `${server.baseUrl}/platform/v1/conversations/${ours.id}/messages`,
      bearer(token, { blocks: [{ type: 'markdown', content: '   ' }] }),
    );
    assert.equal(blank.status, 400);
    assert.equal((await blank.json()).code, 'empty_message');
    const cliBlank = await parley(
      'conversations',
      'post',
      '--company',
      companyId,
      '--conversation',
      ours.id,
      '--text',
      ' ',
    );
    assert.equal((cliBlank.json.error as { code: string }).code, 'empty_message');

    const foreign = await parley(
      'conversations',
      'close',
      '--company',
      companyId,
      '--conversation',
      theirs.id,
    );
    assert.equal((foreign.json.error as { code: string }).code, 'conversation_not_found');

    await parley('conversations', 'close', '--company', companyId, '--conversation', ours.id);
    const late = await fetch(
      `${server.baseUrl}/platform/v1/conversations/${ours.id}/messages`,
      bearer(token, { blocks: [{ type: 'markdown', content: 'Too late' }] }),
    );
    assert.equal(late.status, 409);
    assert.equal((await late.json()).code, 'conversation_closed');
  });

  it('a change made from the CLI reaches a visitor connected to the server, live', async () => {
    const { conversation, c } = await connectToNewConversation(server, newVisitor(companyId));
    try {
      await parley(
        'conversations',
        'post',
        '--company',
        companyId,
        '--conversation',
        conversation.id,
        '--text',
        'Hi from ops',
        '--author',
        'Ops',
      );
      const seen = await c.log.waitFor((e) => e.some((x) => x.message_snapshot.role === 'agent'));
      const agent = seen.find((x) => x.message_snapshot.role === 'agent')!;
      assert.equal(agent.message_snapshot.author?.name, 'Ops');
      assert.equal((agent.message_snapshot.blocks[0] as { content: string }).content, 'Hi from ops');
    } finally {
      c.close();
    }
  });
});
