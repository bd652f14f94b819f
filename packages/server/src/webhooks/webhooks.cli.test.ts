import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runParley, runParleyInProcess } from '@parley/testing/cli';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { createConversation, newVisitor } from '@parley/testing/webchat/webchat-fixtures';
import { startWebhookSink, verifyDelivery, type WebhookSink } from '@parley/testing/webhooks/webhook-sink';

for (const database of TEST_DATABASES) {
  describe(`webhooks CLI (${database})`, () => {
    let server: TestServer;
    let sink: WebhookSink;
    let companyId: string;
    before(async () => {
      // An hour: the CLI's add is seen because the server drops its cache after another process's commit (SQLite)
      // or is not cached at all (PostgreSQL without Redis), never because an entry grew old.
      server = await startTestServer({ database, config: { companyCacheTtlMs: 3_600_000 } });
      sink = await startWebhookSink();
      companyId = (await server.ctx.companies.create('CLI hooks')).id;
    });
    after(async () => {
      await server.close();
      await sink.close();
    });

    it('creates (secret printed once), lists (no secret) and deletes; the live server delivers to it', async () => {
      // The live server first learns that the company has no endpoint (its company cache keeps that: outbox.ts);
      // the CLI's add, made by another process, must still be in the next conversation's event.
      await createConversation(server, newVisitor(companyId));
      const created = await runParley(server, [
        'webhooks',
        'create',
        '--company',
        companyId,
        '--url',
        sink.url,
        '--events',
        'conversation.created conversation.closed',
        '--json',
      ]);
      assert.equal(created.code, 0, created.stderr);
      assert.match(created.json.secret, /^whsec_/);
      assert.deepEqual(created.json.events, ['conversation.created', 'conversation.closed']);

      await createConversation(server, newVisitor(companyId));
      const [event] = await waitFor('the delivery', () => sink.received.length > 0 && sink.received);
      verifyDelivery(created.json.secret, event!);

      const listed = await runParleyInProcess(server, ['webhooks', 'list', '--company', companyId, '--json']);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(
        listed.json.webhooks.map((w: { id: string }) => w.id),
        [created.json.id],
      );
      assert.ok(!listed.stdout.includes(created.json.secret.slice(6)));

      const bad = await runParleyInProcess(server, [
        'webhooks',
        'create',
        '--company',
        companyId,
        '--url',
        sink.url,
        '--events',
        'nope',
        '--json',
      ]);
      assert.notEqual(bad.code, 0);
      assert.equal(bad.json.error.code, 'invalid_events');

      const deleted = await runParleyInProcess(server, [
        'webhooks',
        'delete',
        '--company',
        companyId,
        '--webhook-id',
        created.json.id,
        '--json',
      ]);
      assert.equal(deleted.code, 0, deleted.stderr);
      const again = await runParleyInProcess(server, [
        'webhooks',
        'delete',
        '--company',
        companyId,
        '--webhook-id',
        created.json.id,
        '--json',
      ]);
      assert.equal(again.json.error.code, 'webhook_not_found');
    });
  });
}
