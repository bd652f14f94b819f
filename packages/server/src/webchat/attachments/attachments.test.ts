import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import {
  download,
  fileForm,
  PDF,
  platformUpload,
  pngOf,
  sdkUpload,
} from '@parley/testing/webchat/attachment-fixtures';
import {
  bearer,
  connectVisitor,
  createConversation,
  fetchPlatformToken,
  listMessages,
  newVisitor,
} from '@parley/testing/webchat/webchat-fixtures';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

for (const database of TEST_DATABASES) {
  describe(`attachments over REST and realtime (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    let token: string;
    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('Files Co')).id;
      token = await fetchPlatformToken(server, companyId, ['conversations:read', 'conversations:write']);
    });
    after(() => server.close());

    const newConversation = async () => {
      const v = newVisitor(companyId);
      return { v, conversation: await createConversation(server, v) };
    };

    it('uploads a PNG: 201 {id, name, content_type, size, sha256, url}; the url serves it inline without headers', async () => {
      const { v, conversation } = await newConversation();
      const png = pngOf(4, 3);
      const res = await sdkUpload(server, v, conversation.id, fileForm(png, 'photo.png', 'image/png'));
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), ['content_type', 'id', 'name', 'sha256', 'size', 'url']);
      assert.equal(res.body.name, 'photo.png');
      assert.equal(res.body.content_type, 'image/png');
      assert.equal(res.body.size, png.length);
      assert.equal(res.body.sha256, sha256(png));
      assert.ok(res.body.url.startsWith(`${server.baseUrl}/`), res.body.url);

      const got = await download(res.body.url);
      assert.equal(got.status, 200);
      assert.deepEqual(got.bytes, png);
      assert.equal(got.headers.get('content-type'), 'image/png');
      assert.equal(got.headers.get('content-length'), String(png.length));
      assert.equal(got.headers.get('x-content-type-options'), 'nosniff');
      assert.match(got.headers.get('content-disposition') ?? '', /^inline; filename="photo.png"/);
      assert.match(got.headers.get('content-security-policy') ?? '', /sandbox/);
    });

    it('serves a PDF and plain text as downloads (Content-Disposition: attachment)', async () => {
      const { v, conversation } = await newConversation();
      const pdf = await sdkUpload(
        server,
        v,
        conversation.id,
        fileForm(PDF, 'invoice.pdf', 'application/pdf'),
      );
      assert.equal(pdf.status, 201, pdf.text);
      assert.equal(pdf.body.content_type, 'application/pdf');
      const pdfGot = await download(pdf.body.url);
      assert.deepEqual(pdfGot.bytes, PDF);
      assert.match(pdfGot.headers.get('content-disposition') ?? '', /^attachment; filename="invoice.pdf"/);

      const text = Buffer.from('Order #12 — größe: M\nThanks!\n');
      const txt = await sdkUpload(server, v, conversation.id, fileForm(text, 'notes.txt', 'text/plain'));
      assert.equal(txt.status, 201, txt.text);
      assert.equal(txt.body.content_type, 'text/plain');
      const txtGot = await download(txt.body.url);
      assert.deepEqual(txtGot.bytes, text);
      assert.equal(txtGot.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.match(txtGot.headers.get('content-disposition') ?? '', /^attachment;/);
      assert.equal(txtGot.headers.get('x-content-type-options'), 'nosniff');
    });

    it('detects the type from the bytes: a generic declared type defers to them, a mismatch is 415', async () => {
      const { v, conversation } = await newConversation();
      const generic = await sdkUpload(
        server,
        v,
        conversation.id,
        fileForm(pngOf(), 'x.bin', 'application/octet-stream'),
      );
      assert.equal(generic.status, 201, generic.text);
      assert.equal(generic.body.content_type, 'image/png');
      const mismatch = await sdkUpload(server, v, conversation.id, fileForm(PDF, 'a.png', 'image/png'));
      assert.equal(mismatch.status, 415);
      assert.equal(mismatch.body.code, 'attachment_type_not_allowed');
      assert.match(res415Type(mismatch.headers), /application\/problem\+json/);
    });

    it('refuses types nobody allows, text with NUL or invalid UTF-8, and an empty file (415)', async () => {
      const { v, conversation } = await newConversation();
      const cases: Array<[Uint8Array, string, string]> = [
        [Buffer.from([0x50, 0x4b, 0x03, 0x04, 1, 2, 3, 4]), 'a.zip', 'application/zip'],
        [Buffer.from('hello\u0000world'), 'nul.txt', 'text/plain'],
        [Buffer.from([0x68, 0x69, 0xc3, 0x28]), 'bad.txt', 'text/plain'],
        [Buffer.concat([Buffer.from('a'.repeat(5000)), Buffer.from([0xff])]), 'late.txt', 'text/plain'],
        [Buffer.alloc(0), 'empty.txt', 'text/plain'],
      ];
      for (const [bytes, name, type] of cases) {
        const res = await sdkUpload(server, v, conversation.id, fileForm(bytes, name, type));
        assert.equal(res.status, 415, `${name}: ${res.text}`);
        assert.equal(res.body.code, 'attachment_type_not_allowed', name);
      }
    });

    it('SVG only when the company allows it, and then only as a download', async () => {
      const company = (await server.ctx.companies.create('Svg Co')).id;
      const v = newVisitor(company);
      const conversation = await createConversation(server, v);
      const svg = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>');
      const refused = await sdkUpload(server, v, conversation.id, fileForm(svg, 'logo.svg', 'image/svg+xml'));
      assert.equal(refused.status, 415);
      assert.equal(refused.body.code, 'attachment_type_not_allowed');
      const settings = await server.ctx.webchat.attachments.settingsFor(company);
      await server.ctx.webchat.attachments.updateSettings(company, {
        ...settings,
        allowedTypes: [...settings.allowedTypes, 'image/svg+xml'],
      });
      const allowed = await sdkUpload(server, v, conversation.id, fileForm(svg, 'logo.svg', 'image/svg+xml'));
      assert.equal(allowed.status, 201, allowed.text);
      const got = await download(allowed.body.url);
      assert.equal(got.headers.get('content-type'), 'image/svg+xml');
      assert.match(got.headers.get('content-disposition') ?? '', /^attachment;/);
    });

    it('enforces the company’s max_attachment_bytes (413), on the stream and on an announced Content-Length', async () => {
      const company = (await server.ctx.companies.create('Small Co')).id;
      const v = newVisitor(company);
      const conversation = await createConversation(server, v);
      await server.ctx.webchat.attachments.updateSettings(company, {
        maxAttachmentBytes: 2000,
        allowedTypes: ['text/plain'],
      });
      const fits = await sdkUpload(
        server,
        v,
        conversation.id,
        fileForm(Buffer.from('x'.repeat(2000)), 'a.txt', 'text/plain'),
      );
      assert.equal(fits.status, 201, fits.text);
      const over = await sdkUpload(
        server,
        v,
        conversation.id,
        fileForm(Buffer.from('x'.repeat(2001)), 'b.txt', 'text/plain'),
      );
      assert.equal(over.status, 413, over.text);
      assert.equal(over.body.code, 'attachment_too_large');
      assert.equal(over.body.max_attachment_bytes, 2000);
      const announced = await sdkUpload(
        server,
        v,
        conversation.id,
        fileForm(Buffer.from('x'.repeat(40_000)), 'c.txt', 'text/plain'),
      );
      assert.equal(announced.status, 413);
      assert.equal(announced.body.code, 'attachment_too_large');
      const stored = await server.ctx.store.db
        .selectFrom('attachments')
        .select('name')
        .where('company_id', '=', company)
        .execute();
      assert.deepEqual(
        stored.map((r) => r.name),
        ['a.txt'],
      );
    });

    it('refuses a request without exactly a `file` part (400 attachment_required)', async () => {
      const { v, conversation } = await newConversation();
      const url = `${server.baseUrl}/sdk/v1/conversations/${conversation.id}/attachments`;
      const json = await http(url, {
        method: 'POST',
        headers: { ...v.headers, 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(json.status, 400);
      assert.equal(json.body.code, 'attachment_required');
      const form = new FormData();
      form.append('note', 'no file here');
      const noFile = await http(url, { method: 'POST', headers: v.headers, body: form });
      assert.equal(noFile.status, 400);
      assert.equal(noFile.body.code, 'attachment_required');
      const wrongField = await sdkUpload(
        server,
        v,
        conversation.id,
        fileForm(pngOf(), 'a.png', 'image/png', 'upload'),
      );
      assert.equal(wrongField.status, 400);
      assert.equal(wrongField.body.code, 'attachment_required');
      // Exactly one file: a second `file` part refuses the whole upload, and nothing of it is kept.
      const stored = async () =>
        (await server.ctx.store.db.selectFrom('attachment_blob_chunks').select('blob_key').execute()).length;
      const chunksBefore = await stored();
      const two = fileForm(pngOf(), 'a.png', 'image/png');
      two.append('file', new Blob([Uint8Array.from(pngOf())], { type: 'image/png' }), 'b.png');
      const twoFiles = await sdkUpload(server, v, conversation.id, two);
      assert.equal(twoFiles.status, 400);
      assert.equal(twoFiles.body.code, 'attachment_required');
      assert.equal(await stored(), chunksBefore, 'the first file was not kept');
      const fieldFirst = new FormData();
      fieldFirst.append('note', 'a field before the file is fine');
      fieldFirst.append('file', new Blob([Uint8Array.from(pngOf())], { type: 'image/png' }), 'c.png');
      assert.equal((await sdkUpload(server, v, conversation.id, fieldFirst)).status, 201);
    });

    it('uploads only to the session’s own conversations (another’s is 404) and needs the session headers', async () => {
      const { conversation } = await newConversation();
      const stranger = newVisitor(companyId);
      const res = await sdkUpload(server, stranger, conversation.id, fileForm(pngOf(), 'a.png', 'image/png'));
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'conversation_not_found');
      const noHeaders = await http(`${server.baseUrl}/sdk/v1/conversations/${conversation.id}/attachments`, {
        method: 'POST',
        body: fileForm(pngOf(), 'a.png', 'image/png'),
      });
      assert.equal(noHeaders.status, 400);
      assert.equal(noHeaders.body.code, 'missing_header');
    });

    it('platform: upload needs conversations:write; an agent post may hold only attachments; reads sign fresh urls', async () => {
      const { v, conversation } = await newConversation();
      const readOnly = await fetchPlatformToken(server, companyId, ['conversations:read']);
      const forbidden = await platformUpload(
        server,
        readOnly,
        conversation.id,
        fileForm(pngOf(), 'a.png', 'image/png'),
      );
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.body.code, 'insufficient_scope');

      const png = pngOf(3, 3, [10, 200, 10]);
      const up = await platformUpload(
        server,
        token,
        conversation.id,
        fileForm(png, 'chart.png', 'image/png'),
      );
      assert.equal(up.status, 201, up.text);
      const posted = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
        bearer(token, { blocks: [{ type: 'attachment', attachment_id: up.body.id }] }),
      );
      assert.equal(posted.status, 201, posted.text);
      const block = posted.body.blocks[0];
      assert.deepEqual(Object.keys(block).sort(), [
        'attachment_id',
        'content_type',
        'id',
        'name',
        'size',
        'type',
        'url',
      ]);
      assert.deepEqual(
        [block.type, block.attachment_id, block.name, block.content_type, block.size],
        ['attachment', up.body.id, 'chart.png', 'image/png', png.length],
      );
      assert.deepEqual((await download(block.url)).bytes, png);

      // Nothing but the id is stored: every read signs its own link.
      const stored = await server.ctx.store.db
        .selectFrom('messages')
        .select('blocks')
        .where('id', '=', posted.body.id)
        .executeTakeFirstOrThrow();
      assert.equal(JSON.parse(stored.blocks)[0].url, undefined);
      const read = (await listMessages(server, v, conversation.id)).body.messages.find(
        (m: { id: string }) => m.id === posted.body.id,
      );
      assert.equal(read.blocks[0].attachment_id, up.body.id);
      assert.match(read.blocks[0].url, /signature=/);
      assert.deepEqual((await download(read.blocks[0].url)).bytes, png);
      const platformRead = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
        bearer(token),
      );
      assert.ok(
        platformRead.body.messages.some((m: { blocks: Array<{ url?: string }> }) => m.blocks[0]?.url),
      );
    });

    it('platform: an attachment of another conversation, or an unknown one, is 400 unknown_attachment', async () => {
      const first = await newConversation();
      const second = await newConversation();
      const up = await platformUpload(
        server,
        token,
        first.conversation.id,
        fileForm(pngOf(), 'a.png', 'image/png'),
      );
      for (const attachmentId of [up.body.id, randomUUID()]) {
        const res = await http(
          `${server.baseUrl}/platform/v1/conversations/${second.conversation.id}/messages`,
          bearer(token, {
            blocks: [
              { type: 'markdown', content: 'See this' },
              { type: 'attachment', attachment_id: attachmentId },
            ],
          }),
        );
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, 'unknown_attachment');
        assert.equal(res.body.errors[0].field, 'blocks.1.attachment_id');
      }
    });

    it('SendMessage: a visitor sends text and an attachment; the envelope carries the signed url; another conversation’s is publish error 400', async () => {
      const { v, conversation } = await newConversation();
      const png = pngOf(5, 5);
      const up = await sdkUpload(server, v, conversation.id, fileForm(png, 'me.png', 'image/png'));
      assert.equal(up.status, 201);
      const live = await connectVisitor(server, v, conversation);
      try {
        await live.sub.publish({
          version: 1,
          client_message_id: randomUUID(),
          blocks: [{ type: 'attachment', attachment_id: up.body.id }],
        });
        const envelopes = await live.log.waitFor((es) => es.some((e) => e.message_snapshot.role === 'user'));
        const mine = envelopes.find((e) => e.message_snapshot.role === 'user')!;
        const block = mine.message_snapshot.blocks[0] as { type: string; url: string; name: string };
        assert.equal(block.type, 'attachment');
        assert.equal(block.name, 'me.png');
        assert.deepEqual((await download(block.url)).bytes, png);

        const other = await newConversation();
        const foreign = await sdkUpload(
          server,
          other.v,
          other.conversation.id,
          fileForm(png, 'x.png', 'image/png'),
        );
        for (const attachmentId of [foreign.body.id, randomUUID()]) {
          await assert.rejects(
            live.sub.publish({
              version: 1,
              client_message_id: randomUUID(),
              blocks: [
                { type: 'markdown', content: 'look' },
                { type: 'attachment', attachment_id: attachmentId },
              ],
            }),
            (err: { code: number }) => err.code === 400,
          );
        }
        await assert.rejects(
          live.sub.publish({
            version: 1,
            client_message_id: randomUUID(),
            blocks: [{ type: 'attachment', attachment_id: 'not-a-uuid' }],
          }),
          (err: { code: number }) => err.code === 400,
        );
      } finally {
        live.close();
      }
    });

    it('a link with a tampered signature, or used for another attachment, is 403 attachment_link_invalid', async () => {
      const { v, conversation } = await newConversation();
      const a = await sdkUpload(server, v, conversation.id, fileForm(pngOf(), 'a.png', 'image/png'));
      const b = await sdkUpload(server, v, conversation.id, fileForm(PDF, 'b.pdf', 'application/pdf'));
      const aUrl = new URL(a.body.url);
      const tampered = new URL(aUrl);
      const sig = tampered.searchParams.get('signature')!;
      tampered.searchParams.set('signature', `${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`);
      const otherId = new URL(aUrl);
      otherId.pathname = otherId.pathname.replace(a.body.id, b.body.id);
      const noSignature = new URL(aUrl);
      noSignature.search = '';
      for (const url of [tampered, otherId, noSignature]) {
        const res = await http(url.href);
        assert.equal(res.status, 403, url.href);
        assert.equal(res.body.code, 'attachment_link_invalid');
      }
    });
  });
}

const res415Type = (headers: Headers) => headers.get('content-type') ?? '';
