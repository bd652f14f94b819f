import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { createCompanyWithConnector } from '@parley/testing/digital-employees/responder-fixtures';
import { TestBot, writeChatCompletionStream } from '@parley/testing/digital-employees/test-bots';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { download, fileForm, PDF, pngOf, sdkUpload } from '@parley/testing/webchat/attachment-fixtures';
import {
  connectToNewConversation,
  newVisitor,
  digitalEmployeeCompletes as replies,
} from '@parley/testing/webchat/webchat-fixtures';

interface AttachmentOnWire {
  type: 'attachment';
  attachment_id: string;
  name: string;
  content_type: string;
  size: number;
  url: string;
}

for (const database of TEST_DATABASES) {
  describe(`digital employees receive attachments (${database})`, () => {
    let server: TestServer;
    let bot: TestBot;
    before(async () => {
      server = await startTestServer({ database });
      bot = await TestBot.start();
    });
    after(async () => {
      await server.close();
      await bot.close();
    });

    /** A visitor of the company's default employee sends text, an image and a PDF; resolves once answered. */
    async function sendWithFiles(companyId: string) {
      const v = newVisitor(companyId);
      const { conversation, c } = await connectToNewConversation(server, v);
      const png = pngOf(6, 6);
      const image = await sdkUpload(server, v, conversation.id, fileForm(png, 'broken.png', 'image/png'));
      const doc = await sdkUpload(
        server,
        v,
        conversation.id,
        fileForm(PDF, 'receipt.pdf', 'application/pdf'),
      );
      assert.equal(image.status, 201);
      assert.equal(doc.status, 201);
      try {
        await c.sub.publish({
          version: 1,
          client_message_id: randomUUID(),
          blocks: [
            { type: 'markdown', content: 'It arrived like this' },
            { type: 'attachment', attachment_id: image.body.id },
            { type: 'attachment', attachment_id: doc.body.id },
          ],
        });
        await c.log.waitFor((e) => replies(e).length >= 1);
      } finally {
        c.close();
      }
      return { png, image: image.body, doc: doc.body };
    }

    it('a webhook bot receives the attachment blocks with signed urls it can fetch', async () => {
      const { companyId, employee } = await createCompanyWithConnector(
        server,
        'webhook',
        bot.url,
        'whk_test',
      );
      await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
      bot.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ reply: 'Thanks, we will replace it.' }));
      };
      const { png, image, doc } = await sendWithFiles(companyId);
      const body = bot.requests.at(-1)!.body as { message: { blocks: Array<{ type: string }> } };
      const blocks = body.message.blocks.filter((b) => b.type === 'attachment') as AttachmentOnWire[];
      assert.deepEqual(
        blocks.map((b) => [b.attachment_id, b.name, b.content_type, b.size]),
        [
          [image.id, 'broken.png', 'image/png', png.length],
          [doc.id, 'receipt.pdf', 'application/pdf', PDF.length],
        ],
      );
      assert.deepEqual((await download(blocks[0]!.url)).bytes, png);
      assert.deepEqual((await download(blocks[1]!.url)).bytes, PDF);
    });

    it('the OpenAI responder sends images as image_url parts and mentions other files in the text', async () => {
      const { companyId, employee } = await createCompanyWithConnector(server, 'openai', bot.url, 'sk-test', {
        model: 'gpt-test',
      });
      await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
      bot.handler = (_req, res) => writeChatCompletionStream(res, 'gpt-test', ['Sorry ', 'about that.']);
      const { png, image } = await sendWithFiles(companyId);
      const body = bot.requests.at(-1)!.body as {
        messages: Array<{ role: string; content: unknown }>;
      };
      const last = body.messages.at(-1)!;
      assert.equal(last.role, 'user');
      const parts = last.content as Array<{ type: string; text?: string; image_url?: { url: string } }>;
      assert.deepEqual(
        parts.map((p) => p.type),
        ['text', 'image_url'],
      );
      assert.equal(
        parts[0]!.text,
        `It arrived like this\n[Attached file: receipt.pdf (application/pdf, ${PDF.length} bytes)]`,
      );
      assert.match(parts[1]!.image_url!.url, new RegExp(`/webchat/attachments/${image.id}\\?`));
      assert.deepEqual((await download(parts[1]!.image_url!.url)).bytes, png);
    });
  });
}
