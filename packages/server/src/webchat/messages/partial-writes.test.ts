import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { ConversationsService } from '../conversations/conversations.service.ts';
import type { MessageSnapshot } from './message.ts';

// The partial snapshots of streaming replies that fall due together are written together — one statement on
// PostgreSQL, one write on SQLite (packages/server/src/webchat/messages/partial-writes.ts) — and still only touch
// messages that are partial.
for (const database of TEST_DATABASES) {
  describe(`partial snapshots written together (${database})`, () => {
    let server: TestServer;
    let conversationId: string;
    const statements: string[] = [];
    before(async () => {
      server = await startTestServer({ database });
      // The server's scheduled jobs share the store and make their first run at start-up, while these tests begin:
      // the attachment sweep's query reads `messages`, and one landing among the statements recorded below fails the
      // PostgreSQL case. Nothing here needs them (packages/server/src/jobs/scheduler.ts): stopped for this file.
      await server.ctx.scheduler.stop();
      const metrics = server.ctx.metrics;
      const observe = metrics.storeQuery.bind(metrics);
      // Only the statements that can belong to a write of messages: the server's background work (the webhook
      // dispatcher's claim, the reply line's sweep) runs beside the test on the same store.
      metrics.storeQuery = (query) => {
        if (/messages|^\s*(begin|commit|rollback|savepoint|release)\b/i.test(query.sql))
          statements.push(query.sql);
        observe(query);
      };
      const company = await server.ctx.companies.create('Partials Co');
      const employee = (await server.ctx.digitalEmployees.list(company.id))[0]!;
      conversationId = (
        await new ConversationsService(server.ctx.store.db, server.ctx.events).create(
          { companyId: company.id, sessionId: randomUUID() },
          employee.id,
        )
      ).id;
    });
    after(() => server.close());

    const reply = (status: 'partial' | 'complete') =>
      server.ctx.webchat.store.insert({
        conversationId,
        role: 'digital_employee',
        author: null,
        status,
        blocks: [{ id: randomUUID(), type: 'typing', typing: true }],
        sequence: 65,
      });
    const withText = (snapshot: MessageSnapshot, content: string): MessageSnapshot => ({
      ...snapshot,
      blocks: [{ id: randomUUID(), type: 'markdown', content }],
      updated_at: new Date().toISOString(),
    });
    const stored = (id: string) =>
      server.ctx.store.db
        .selectFrom('messages')
        .select(['status', 'blocks', 'sequence'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();

    it('writes the partials of one turn together: one statement without BEGIN/COMMIT on PostgreSQL, one write on SQLite', async () => {
      const streaming = await Promise.all(Array.from({ length: 12 }, () => reply('partial')));
      const completed = await reply('complete');
      statements.length = 0;
      const outcomes = await Promise.all([
        ...streaming.map((m, i) =>
          server.ctx.webchat.store.persistPartial(withText(m, `text ${i}`), 100 + i),
        ),
        server.ctx.webchat.store.persistPartial(withText(completed, 'late'), 200),
      ]);
      assert.deepEqual(outcomes, [...streaming.map(() => true), false], 'only partial messages are written');
      const updates = statements.filter((s) => /update\s+"?messages"?/i.test(s));
      if (database === 'postgres') {
        assert.equal(updates.length, 1, `one statement for 13 rows, got:\n${statements.join('\n')}`);
        assert.deepEqual(statements, updates, 'no BEGIN or COMMIT around the one statement');
      } else {
        // No round trips to save: a statement per row, in one write without a savepoint each.
        assert.equal(updates.length, 13);
        assert.equal(statements.filter((s) => /^begin/i.test(s)).length, 1, statements.join('\n'));
        assert.equal(statements.filter((s) => /savepoint/i.test(s)).length, 0, statements.join('\n'));
      }
      for (const [i, m] of streaming.entries()) {
        const row = await stored(m.id);
        assert.equal(row.sequence, 100 + i);
        assert.equal(JSON.parse(row.blocks)[0].content, `text ${i}`);
        assert.equal(row.status, 'partial');
      }
      const untouched = await stored(completed.id);
      assert.equal(untouched.status, 'complete');
      assert.equal(untouched.sequence, 65);
      assert.equal(JSON.parse(untouched.blocks)[0].type, 'typing');
    });

    it('writes a row that falls due while a statement is in flight with the next one, the newer of one message winning', async () => {
      const [a, b] = await Promise.all([reply('partial'), reply('partial')]);
      statements.length = 0;
      const first = server.ctx.webchat.store.persistPartial(withText(a!, 'a1'), 70);
      // The next turn: the first statement is on its way; these two rows wait for it and go together after it.
      await new Promise((resolve) => setImmediate(resolve));
      const older = server.ctx.webchat.store.persistPartial(withText(b!, 'b1'), 71);
      const newer = server.ctx.webchat.store.persistPartial(withText(b!, 'b2'), 72);
      const again = server.ctx.webchat.store.persistPartial(withText(a!, 'a2'), 73);
      assert.deepEqual(await Promise.all([first, older, newer, again]), [true, true, true, true]);
      // One statement per write on PostgreSQL, one write (a transaction) each on SQLite.
      const writes = database === 'postgres' ? /update\s+"?messages"?/i : /^begin/i;
      assert.equal(statements.filter((s) => writes.test(s)).length, 2, statements.join('\n'));
      assert.equal(JSON.parse((await stored(a!.id)).blocks)[0].content, 'a2');
      const rowB = await stored(b!.id);
      assert.equal(JSON.parse(rowB.blocks)[0].content, 'b2');
      assert.equal(rowB.sequence, 72);
    });
  });
}
