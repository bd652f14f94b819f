import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startTestServer } from '@parley/testing/test-server';
import { waitForSettled } from '@parley/testing/wait';
import {
  connectToNewConversation,
  connectVisitor,
  createCompanyWithSlowEmployee,
  createConversation,
  digitalEmployeeCompletes,
  listMessages,
  newVisitor,
  replyIsStreaming,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { MessageStore } from './messages/message-store.ts';

describe('webchat restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-restart-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('a graceful shutdown ends a streaming reply with an error block and closes the WebSockets promptly', async (t) => {
    const server = await startTestServer();
    // Closed by the test itself on the way; on an earlier failure, here (a client left reconnecting or a server left
    // open would keep the file's process alive).
    let closing = false;
    t.after(() => (closing ? undefined : server.close()));
    const { company } = await createCompanyWithSlowEmployee(server, 'Shutdown Co', {
      words: 40,
      delayMs: 100,
    });
    const v = newVisitor(company.id);
    const { c } = await connectToNewConversation(server, v);
    t.after(() => c.close());
    const closed = new Promise<number>((resolve) => c.client.once('connecting', (ctx) => resolve(ctx.code)));
    await sendMessage(c.sub, 'go');
    await c.log.waitFor(replyIsStreaming);
    const started = Date.now();
    closing = true;
    await server.close();
    assert.ok(Date.now() - started < 8_000, 'close does not wait for the clients');
    const last = c.log.envelopes.filter((x) => x.message_snapshot.role === 'digital_employee').at(-1)!;
    assert.equal(last.operation, 'complete');
    assert.equal((last.message_snapshot.blocks.at(-1) as { code: string }).code, 'reply_interrupted');
    // 3001 "shutdown": the client reconnects (to another node, or when this one is back).
    assert.equal(await waitForSettled(closed, 5_000, 'client sees the shutdown'), 3001);
  });

  it('completes a reply left partial by a crash with an error block at start-up', async (t) => {
    const first = await startTestServer({ config: { dataDir } });
    let firstClosed = false;
    t.after(() => (firstClosed ? undefined : first.close()));
    const company = await first.ctx.companies.create('Crash Co');
    const v = newVisitor(company.id);
    const conversation = await createConversation(first, v);
    // What a crash mid-stream leaves behind: a digital-employee message stored as partial, with streamed text.
    const stuck = await new MessageStore(first.ctx.store, first.ctx.events).insert({
      conversationId: conversation.id,
      role: 'digital_employee',
      author: { id: randomUUID(), name: 'Ava' },
      status: 'partial',
      blocks: [{ id: 'b1', type: 'markdown', content: 'Half an ans' }],
      sequence: 4,
    });
    firstClosed = true;
    await first.close();

    const second = await startTestServer({ config: { dataDir } });
    try {
      const res = await listMessages(second, v, conversation.id);
      const message = res.body.messages.find((m: { id: string }) => m.id === stuck.id);
      assert.equal(message.status, 'complete');
      assert.deepEqual(message.blocks[0], { id: 'b1', type: 'markdown', content: 'Half an ans' });
      assert.equal(message.blocks[1].type, 'error');
      assert.equal(message.blocks[1].code, 'reply_interrupted');
      // The conversation goes on: the next message is answered normally.
      const c = await connectVisitor(second, v, conversation);
      try {
        await sendMessage(c.sub, 'thanks');
        await c.log.waitFor((e) => digitalEmployeeCompletes(e).length > 0);
      } finally {
        c.close();
      }
    } finally {
      await second.close();
    }
  });
});
