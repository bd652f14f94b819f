import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import {
  assertNoKey,
  assertNoKeyInLogs,
  assertTimesOut,
  conversationWith,
  createCompanyWithConnector,
  failureAbortingAfterFirstDelta,
  failureOf,
  respondAs,
  rotateThroughApi,
  startServerAndBotPerSuite,
  untilCallerHangsUp,
} from '@parley/testing/digital-employees/responder-fixtures';
import { type TestBot, writeChatCompletionStream } from '@parley/testing/digital-employees/test-bots';
import { collect } from '@parley/testing/digital-employees/test-messages';
import type { TestServer } from '@parley/testing/test-server';
import type { DigitalEmployee } from '../digital-employees.service.ts';
import { createResponder } from './create-responder.ts';
import { OpenAiResponder } from './openai.responder.ts';
import type { ReplyChunk, RespondInput } from './responder.ts';

interface ChatRequest {
  model: string;
  stream: boolean;
  messages: Array<{ role: string; content: string }>;
}

for (const database of TEST_DATABASES) {
  describe(`openai responder (${database})`, () => {
    let server: TestServer;
    let api: TestBot;
    startServerAndBotPerSuite(database, (startedServer, startedBot) => {
      server = startedServer;
      api = startedBot;
    });

    const KEY = `sk-test-${randomUUID()}`;
    const MODEL = 'parley-test-model';
    const respond = (employee: DigitalEmployee, input: Omit<RespondInput, 'digitalEmployee'>) =>
      respondAs(server, employee, input);
    const setup = (settings = {}, systemPrompt: string | null = 'You are Max, the Acme support assistant.') =>
      createCompanyWithConnector(server, 'openai', `${api.url}/v1`, KEY, {
        model: MODEL,
        systemPrompt,
        settings,
      });

    const conversation = (companyId: string, signal = new AbortController().signal) =>
      conversationWith(
        companyId,
        [
          ['digital_employee', 'Hi! How can I help?'],
          ['user', 'My parcel is late.'],
          ['system', 'Sam (a human agent) joined the conversation.'],
          ['agent', 'I have checked: it left the warehouse today.'],
          ['digital_employee', 'Half a rep', { status: 'partial' }],
        ],
        'When will it **arrive**?',
        signal,
      );

    const streamHandler = (deltas: string[]) => (_req: unknown, res: ServerResponse) =>
      writeChatCompletionStream(res, MODEL, deltas);

    it('streams Chat Completions from {base URL}/chat/completions with the model, system prompt, history and bearer key', async () => {
      const { companyId, employee } = await setup();
      api.handler = streamHandler(['It ', 'arrives ', '**tomorrow**.']);
      const before = api.requests.length;
      const responder = createResponder(employee, { connectors: server.ctx.connectorCaller });
      assert.ok(responder instanceof OpenAiResponder);
      assert.deepEqual(await collect(respond(employee, conversation(companyId))), [
        'It ',
        'arrives ',
        '**tomorrow**.',
      ]);
      const [request] = api.requests.slice(before);
      assert.equal(request!.method, 'POST');
      assert.equal(request!.path, '/v1/chat/completions');
      assert.equal(request!.authorization, `Bearer ${KEY}`);
      const body = request!.body as ChatRequest;
      assert.equal(body.model, MODEL);
      assert.equal(body.stream, true);
      assert.deepEqual(body.messages, [
        { role: 'system', content: 'You are Max, the Acme support assistant.' },
        { role: 'assistant', content: 'Hi! How can I help?' },
        { role: 'user', content: 'My parcel is late.' },
        { role: 'assistant', content: '[Sam, human agent] I have checked: it left the warehouse today.' },
        { role: 'user', content: 'When will it **arrive**?' },
      ]);
    });

    it('reads a tapped quick reply (postback) as the visitor’s text', async () => {
      const { companyId, employee } = await setup();
      api.handler = streamHandler(['Sure.']);
      const before = api.requests.length;
      const input = conversation(companyId);
      input.message = {
        ...input.message,
        blocks: [{ id: 'p1', type: 'postback', option_id: 'track', label: 'Track my order' }],
      };
      assert.deepEqual(await collect(respond(employee, input)), ['Sure.']);
      const body = api.requests.slice(before)[0]!.body as ChatRequest;
      assert.deepEqual(body.messages.at(-1), { role: 'user', content: 'Track my order' });
    });

    it('yields deltas as they arrive and limits the history to history_limit', async () => {
      const { companyId, employee } = await setup({ history_limit: 1, timeout_ms: 5000 }, null);
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      api.handler = async (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (content: string) =>
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
        res.write(chunk('Soon'));
        await released;
        res.end(`${chunk(', very soon.')}data: [DONE]\n\n`);
      };
      const received: ReplyChunk[] = [];
      for await (const delta of respond(employee, conversation(companyId))) {
        received.push(delta);
        if (received.length === 1) release();
      }
      assert.deepEqual(received, ['Soon', ', very soon.']);
      const body = api.requests.at(-1)!.body as ChatRequest;
      assert.deepEqual(body.messages, [
        { role: 'system', content: 'You are Model, a helpful assistant chatting with a website visitor.' },
        { role: 'assistant', content: '[Sam, human agent] I have checked: it left the warehouse today.' },
        { role: 'user', content: 'When will it **arrive**?' },
      ]);
    });

    it('maps HTTP errors, error events and unparsable events to typed errors without the key', async () => {
      const { companyId, employee } = await setup();
      const cases: Array<[(res: ServerResponse) => unknown, string, number?]> = [
        [
          (res) =>
            res.writeHead(401, { 'content-type': 'application/json' }).end(
              JSON.stringify({
                error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error' },
              }),
            ),
          'responder_http_error',
          401,
        ],
        [
          (res) =>
            res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"boom"}}'),
          'responder_http_error',
          500,
        ],
        [
          (res) =>
            res
              .writeHead(200, { 'content-type': 'text/event-stream' })
              .end(`data: {"error":{"message":"overloaded ${KEY}"}}\n\n`),
          'responder_bad_response',
        ],
        [
          (res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: {not json\n\n'),
          'responder_bad_response',
        ],
      ];
      for (const [handler, code, status] of cases) {
        api.handler = (_req, res) => handler(res);
        const err = await failureOf(respond(employee, conversation(companyId)));
        assert.equal(err.code, code, handler.toString());
        assert.equal(err.status, status);
        assertNoKey(err, KEY);
      }
    });

    it('times out on a silent API and on a stalled stream, and never reports a cut-off reply as complete', async () => {
      const { companyId, employee } = await setup({ timeout_ms: 1000 });
      await assertTimesOut(
        api,
        () => respond(employee, conversation(companyId)),
        {
          silent: async (_req, res) => {
            await untilCallerHangsUp(res);
            await writeChatCompletionStream(res, MODEL, ['late']);
          },
          stalled: async (_req, res) => {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write(
              `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [{ index: 0, delta: { content: 'Partly' }, finish_reason: null }] })}\n\n`,
            );
            await untilCallerHangsUp(res);
            res.end('data: [DONE]\n\n');
          },
        },
        ['Partly'],
      );
    });

    it('aborts the request when the signal fires', async () => {
      const { companyId, employee } = await setup({ timeout_ms: 5000 });
      let closed!: Promise<void>;
      api.handler = async (_req, res) => {
        closed = new Promise((resolve) => res.on('close', () => resolve()));
        await writeChatCompletionStream(res, MODEL, ['One ', 'two ', 'three ', 'four'], 300);
      };
      const received: ReplyChunk[] = [];
      const err = await failureAbortingAfterFirstDelta(
        (signal) => respond(employee, conversation(companyId, signal)),
        received,
      );
      assert.equal(err.code, 'responder_aborted');
      assert.deepEqual(received, ['One ']);
      await closed;
    });

    it('uses a rotated key on the very next call and never the old one again', async () => {
      const { companyId, connectorId, employee } = await setup();
      api.handler = streamHandler(['ok']);
      await collect(respond(employee, conversation(companyId)));
      assert.equal(api.requests.at(-1)!.authorization, `Bearer ${KEY}`);

      const newKey = `sk-rotated-${randomUUID()}`;
      await rotateThroughApi(server, companyId, connectorId, newKey);
      const afterRotation = api.requests.length;
      const responder = createResponder(employee, { connectors: server.ctx.connectorCaller });
      for (let i = 0; i < 2; i++) {
        assert.deepEqual(
          await collect(responder.respond({ ...conversation(companyId), digitalEmployee: employee })),
          ['ok'],
        );
      }
      assert.deepEqual(
        api.requests.slice(afterRotation).map((r) => r.authorization),
        [`Bearer ${newKey}`, `Bearer ${newKey}`],
      );
      assertNoKeyInLogs(server, KEY, newKey);
    });
  });
}
