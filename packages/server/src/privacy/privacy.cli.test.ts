import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runParley, runParleyInProcess } from '@parley/testing/cli';
import { TEST_DATABASES, testRedisUrl } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitForSettled } from '@parley/testing/wait';
import {
  connectToNewConversation,
  digitalEmployeeCompletes,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';

// `parley privacy export|erase` against a running server's data; on PostgreSQL with Redis, the CLI's erasure
// disconnects the visitor's live session on the server (the broker's control channel) and drops its history there.
for (const database of TEST_DATABASES) {
  const redis = database === 'postgres';
  describe(`privacy CLI (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    before(async () => {
      server = await startTestServer({ database, redis, config: { webchat: { streamFlushIntervalMs: 0 } } });
      companyId = (await server.ctx.companies.create('CLI privacy')).id;
    });
    after(() => server.close());

    it('exports (to a file), then erases a session with a receipt; usage errors for selectors', async (t) => {
      const canary = `canary-${randomUUID()}`;
      const v = newVisitor(companyId);
      const { conversation, c } = await connectToNewConversation(server, v);
      t.after(() => c.close());
      const disconnected = new Promise<void>((resolve) => c.client.once('disconnected', () => resolve()));
      await sendMessage(c.sub, canary);
      await c.log.waitFor((envelopes) => digitalEmployeeCompletes(envelopes).length >= 1);

      const out = join(server.dataDir, 'export.json');
      const exported = await runParleyInProcess(server, [
        'privacy',
        'export',
        '--company',
        companyId,
        '--session-id',
        v.sessionId,
        '--out',
        out,
        '--json',
      ]);
      assert.equal(exported.code, 0, exported.stdout);
      const doc = JSON.parse(readFileSync(out, 'utf8'));
      assert.equal(doc.conversations[0].id, conversation.id);
      assert.ok(JSON.stringify(doc).includes(canary));

      // The CLI waits for the history's second removal before it exits; a short window keeps the test quick.
      const env: Record<string, string> = {
        PARLEY_ERASURE_LATE_PUBLISH_MS: '50',
        ...(redis ? { REDIS_URL: testRedisUrl() } : {}),
      };
      const erased = await runParley(
        server,
        ['privacy', 'erase', '--company', companyId, '--conversation-id', conversation.id, '--json'],
        env,
      );
      assert.equal(erased.code, 0, erased.stderr);
      assert.equal(erased.json.erased.conversations, 1);
      assert.ok(erased.json.erased.messages >= 2);
      const left = await server.ctx.store.db
        .selectFrom('messages')
        .select('id')
        .where('conversation_id', '=', conversation.id)
        .execute();
      assert.equal(left.length, 0);
      if (redis) {
        await waitForSettled(disconnected, 10_000, 'the live session on the server disconnected by the CLI');
      }

      const both = await runParleyInProcess(server, [
        'privacy',
        'erase',
        '--company',
        companyId,
        '--session-id',
        'a',
        '--visitor-sub',
        'b',
        '--json',
      ]);
      assert.notEqual(both.code, 0);
      assert.equal(both.json.error.code, 'usage');
    });
  });
}
