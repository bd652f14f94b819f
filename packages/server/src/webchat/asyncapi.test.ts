import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Parser } from '@asyncapi/parser';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { fileForm, pngOf, sdkUpload } from '@parley/testing/webchat/attachment-fixtures';
import {
  bearer,
  connectToNewConversation,
  connectVisitor,
  createSlowEmployee,
  digitalEmployeeCompletes,
  fetchPlatformToken,
  newVisitor,
  replyIsStreaming,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { visitorTypingEvent } from './inbox-feed/inbox-feed.ts';
import type { MessageEnvelope } from './messages/message.ts';
import { parseVisitorTyping } from './messages/send-message.ts';

const DOC = new URL('../../../../docs/asyncapi.yaml', import.meta.url);

// Keep the parser from phoning home (it reports usage through Scarf unless told not to).
process.env.SCARF_ANALYTICS = 'false';

describe('docs/asyncapi.yaml', () => {
  let server: TestServer;
  // biome-ignore lint/suspicious/noExplicitAny: the parser's document model is untyped JSON here.
  let doc: any;
  before(async () => {
    server = await startTestServer({ config: { webchat: { responderTimeoutMs: 500 } } });
    const { document, diagnostics } = await new Parser().parse(readFileSync(DOC, 'utf8'));
    const errors = diagnostics.filter((d) => d.severity === 0);
    assert.deepEqual(
      errors.map((d) => `${d.path.join('.')}: ${d.message}`),
      [],
    );
    assert.ok(document);
    doc = document;
  });
  after(() => server.close());

  it('is a valid AsyncAPI 3.1.0 document describing the conversation channel and its operations', () => {
    assert.equal(doc.version(), '3.1.0');
    const channel = doc.channels().get('conversation');
    assert.equal(channel.address(), 'messages:companies.{companyId}.conversations.{conversationId}');
    assert.deepEqual(
      doc
        .operations()
        .all()
        .map((o: { action(): string }) => o.action())
        .sort(),
      ['receive', 'receive', 'receive', 'send'],
    );
    assert.equal(doc.channels().get('inbox').address(), 'inbox:companies.{companyId}');
  });

  it('describes the inbox events the server publishes: a real entry validates against InboxEvent', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const valid = ajv.compile(doc.components().messages().get('InboxEvent').payload().json());
    const company = await server.ctx.companies.create('Inbox Schema Co');
    const v = newVisitor(company.id);
    const { conversation, c } = await connectToNewConversation(server, v);
    try {
      await sendMessage(c.sub, 'Hello **there**');
      await c.log.waitFor((e) => digitalEmployeeCompletes(e).length > 0);
      await http(`${server.baseUrl}/sdk/v1/conversations/${conversation.id}/request-human`, {
        method: 'POST',
        headers: { ...v.headers, 'content-type': 'application/json' },
        body: '{}',
      });
      const found = await server.ctx.webchat.conversations.find(conversation.id);
      // The same builder the feed publishes with (inbox-feed/inbox-feed.ts).
      const [entry] = await server.ctx.webchat.inbox.views([found!]);
      const event = { version: 1, type: 'conversation', conversation: entry };
      assert.ok(valid(event), JSON.stringify(valid.errors));
      assert.ok(entry!.queued_at);
      assert.equal(valid({ ...event, type: 'other' }), false);
    } finally {
      c.close();
    }
  });

  it('describes visitor typing both ways: what the SDK publishes and the inbox event the server relays', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const validTyping = ajv.compile(doc.components().messages().get('VisitorTyping').payload().json());
    const validSend = ajv.compile(doc.components().messages().get('SendMessage').payload().json());
    const validRelay = ajv.compile(doc.components().messages().get('InboxVisitorTyping').payload().json());
    const validEntry = ajv.compile(doc.components().messages().get('InboxEvent').payload().json());
    // What the publish hook accepts (messages/send-message.ts) is what the schema describes.
    const published = parseVisitorTyping({ version: 1, event: 'typing' });
    assert.ok(validTyping(published), JSON.stringify(validTyping.errors));
    assert.equal(validSend(published), false, 'told apart from a SendMessage');
    assert.equal(validTyping({ ...published, text: 'draft' }), false);
    // The same builder the feed relays with (inbox-feed/inbox-feed.ts).
    const relayed: Record<string, unknown> = JSON.parse(
      JSON.stringify(visitorTypingEvent(randomUUID(), new Date())),
    );
    assert.ok(validRelay(relayed), JSON.stringify(validRelay.errors));
    assert.equal(validEntry(relayed), false, 'not an inbox entry');
    assert.equal(validRelay({ ...relayed, event: 'typing' }), false);
  });

  it('describes exactly what the server sends: every real envelope validates against MessageEnvelope', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const envelopeSchema = doc.components().messages().get('MessageEnvelope').payload().json();
    const sendSchema = doc.components().messages().get('SendMessage').payload().json();
    const validEnvelope = ajv.compile(envelopeSchema);
    const validSend = ajv.compile(sendSchema);

    const company = await server.ctx.companies.create('Schema Co');
    const v = newVisitor(company.id);
    const { conversation, c } = await connectToNewConversation(server, v);
    try {
      const send = {
        version: 1,
        client_message_id: randomUUID(),
        blocks: [{ type: 'markdown', content: 'Who are you?' }],
      };
      assert.ok(validSend(send), JSON.stringify(validSend.errors));
      assert.equal(validSend({ ...send, version: 2 }), false);
      assert.equal(validSend({ ...send, blocks: [] }), false);
      await c.sub.publish(send);
      await c.log.waitFor((e) => digitalEmployeeCompletes(e).length > 0);
      // A message of only an attachment: its envelope carries the attachment block with its signed url.
      const uploaded = await sdkUpload(server, v, conversation.id, fileForm(pngOf(), 'a.png', 'image/png'));
      const withFile = {
        version: 1,
        client_message_id: randomUUID(),
        blocks: [{ type: 'attachment', attachment_id: uploaded.body.id }],
      };
      assert.ok(validSend(withFile), JSON.stringify(validSend.errors));
      await c.sub.publish(withFile);
      await c.log.waitFor((e) =>
        e.some((x) => x.message_snapshot.blocks.some((b) => b.type === 'attachment')),
      );
      // An agent message and a system message (the handover notice).
      const token = await fetchPlatformToken(server, company.id, ['conversations:write']);
      const posted = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
        bearer(token, {
          blocks: [
            { type: 'markdown', content: 'Agent here.' },
            { type: 'quick_replies', options: [{ id: 'size-42', label: 'Size 42' }] },
            {
              type: 'card',
              title: 'Runners',
              text: 'In stock.',
              image_url: 'https://shop.example/r.png',
              buttons: [
                { id: 'buy', label: 'Buy' },
                { id: 'more', label: 'More', url: 'https://shop.example/r' },
              ],
            },
          ],
        }),
      );
      assert.equal(posted.status, 201);
      await c.log.waitFor((e) => e.some((x) => x.message_snapshot.role === 'agent'));
      // The visitor's answer to the agent's offer (interactive blocks): a postback.
      const postback = {
        version: 1,
        client_message_id: randomUUID(),
        blocks: [{ type: 'postback', option_id: 'size-42', label: 'Size 42' }],
      };
      assert.ok(validSend(postback), JSON.stringify(validSend.errors));
      assert.equal(validSend({ ...postback, blocks: [{ type: 'postback', option_id: 'size-42' }] }), false);
      await c.sub.publish(postback);
      await c.log.waitFor((e) => e.some((x) => x.message_snapshot.blocks.some((b) => b.type === 'postback')));
    } finally {
      c.close();
    }

    // A failed reply: complete with an error block, then a system message.
    const slow = await createSlowEmployee(server, company.id, { words: 30, delayMs: 100 });
    await server.ctx.digitalEmployees.setDefault(company.id, slow.id);
    const v2 = newVisitor(company.id);
    const { conversation: conversation2, c: c2 } = await connectToNewConversation(server, v2);
    let inFlight: unknown;
    try {
      await sendMessage(c2.sub, 'anything');
      await c2.log.waitFor(replyIsStreaming);
      // A second tab subscribing mid-reply: its subscribe result carries the reply in flight.
      const late = await connectVisitor(server, v2, conversation2);
      inFlight = late.subscribedData[0];
      late.close();
      await c2.log.waitFor((e) => e.some((x) => x.message_snapshot.role === 'system'));
    } finally {
      c2.close();
    }
    const validInFlight = ajv.compile(doc.components().schemas().get('InFlightMessages').json());
    assert.deepEqual(Object.keys((inFlight as { read_marks: object }).read_marks).sort(), [
      'agent',
      'visitor',
    ]);
    assert.ok(
      validInFlight(inFlight),
      `${JSON.stringify(inFlight)}: ${JSON.stringify(validInFlight.errors)}`,
    );
    assert.equal((inFlight as { in_flight: unknown[] }).in_flight.length, 1);
    assert.equal(validInFlight({ in_flight: [{ sequence: 1 }] }), false, 'the schema is not vacuous');

    const envelopes: MessageEnvelope[] = [...c.log.envelopes, ...c2.log.envelopes];
    const kinds = new Set(envelopes.flatMap((e) => e.message_snapshot.blocks.map((b) => b.type)));
    assert.deepEqual([...kinds].sort(), [
      'attachment',
      'card',
      'error',
      'markdown',
      'notice',
      'postback',
      'quick_replies',
      'typing',
    ]);
    const roles = new Set(envelopes.map((e) => e.message_snapshot.role));
    assert.deepEqual([...roles].sort(), ['agent', 'digital_employee', 'system', 'user']);
    for (const envelope of envelopes) {
      assert.ok(
        validEnvelope(envelope),
        `${JSON.stringify(envelope)}: ${JSON.stringify(validEnvelope.errors)}`,
      );
    }
    // The schema is not vacuous: a malformed envelope fails.
    assert.equal(validEnvelope({ ...envelopes[0], operation: 'append' }), false);
    assert.equal(validEnvelope({ ...envelopes[0], version: '1' }), false);
    const offer = envelopes.find((e) => e.message_snapshot.blocks.some((b) => b.type === 'card'))!;
    const withLink = (url: string) => ({
      ...offer,
      message_snapshot: {
        ...offer.message_snapshot,
        blocks: offer.message_snapshot.blocks.map((b) =>
          b.type === 'card' ? { ...b, buttons: [{ id: 'x', label: 'X', url }] } : b,
        ),
      },
    });
    assert.ok(validEnvelope(withLink('https://ok.example/')), JSON.stringify(validEnvelope.errors));
    assert.equal(validEnvelope(withLink('javascript:alert(1)')), false, 'a link is http(s) only');
  });

  it('describes the read events the server publishes when agents read', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const validRead = ajv.compile(doc.components().messages().get('ReadEvent').payload().json());
    const company = await server.ctx.companies.create('Read Schema Co');
    const v = newVisitor(company.id);
    const { conversation, c } = await connectToNewConversation(server, v);
    try {
      const stored = await server.ctx.webchat.conversations.find(conversation.id);
      // What the portal inbox's read route does (workspace/inbox.portal.routes.ts).
      await server.ctx.webchat.reads.markAgentRead(stored!);
      const [event] = await waitFor('the read event', () => c.readEvents.length > 0 && c.readEvents);
      assert.ok(validRead(event), `${JSON.stringify(event)}: ${JSON.stringify(validRead.errors)}`);
      assert.equal(validRead({ ...event, event: 'unread' }), false, 'the schema is not vacuous');
      assert.equal(validRead({ ...event, operation: 'complete' }), false);
      // Envelope readers ignore it: it is not a MessageEnvelope.
      const validEnvelope = ajv.compile(doc.components().messages().get('MessageEnvelope').payload().json());
      assert.equal(validEnvelope(event), false);
    } finally {
      c.close();
    }
  });
});
