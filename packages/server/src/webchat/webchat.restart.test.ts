import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startTestServer } from '../testing/test-server.ts';
import { MessageStore } from './messages/message-store.ts';
import {
  connectVisitor,
  createConversation,
  sdkGet,
  sendMessage,
  visitor,
} from './testing/webchat-fixtures.ts';

describe('webchat restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-restart-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('completes a reply left partial by a crash with an error block at start-up', async () => {
    const first = await startTestServer({ config: { dataDir } });
    const company = await first.ctx.companies.create('Crash Co');
    const v = visitor(company.id);
    const conversation = await createConversation(first, v);
    // What a crash mid-stream leaves behind: a digital-employee message stored as partial, with streamed text.
    const stuck = await new MessageStore(first.ctx.store.db).insert({
      conversationId: conversation.id,
      role: 'digital_employee',
      author: { id: randomUUID(), name: 'Ava' },
      status: 'partial',
      blocks: [{ id: 'b1', type: 'markdown', content: 'Half an ans' }],
      sequence: 4,
    });
    await first.close();

    const second = await startTestServer({ config: { dataDir } });
    try {
      const res = await sdkGet(second, v, `/conversations/${conversation.id}/messages`);
      const message = res.body.messages.find((m: { id: string }) => m.id === stuck.id);
      assert.equal(message.status, 'complete');
      assert.deepEqual(message.blocks[0], { id: 'b1', type: 'markdown', content: 'Half an ans' });
      assert.equal(message.blocks[1].type, 'error');
      assert.equal(message.blocks[1].code, 'reply_interrupted');
      // The conversation goes on: the next message is answered normally.
      const c = await connectVisitor(second, v, conversation);
      try {
        await sendMessage(c.sub, 'thanks');
        await c.log.until((e) =>
          e.some((x) => x.message_snapshot.role === 'digital_employee' && x.operation === 'complete'),
        );
      } finally {
        c.close();
      }
    } finally {
      await second.close();
    }
  });
});
