import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import {
  createCompanyWithConnector,
  rotateThroughApi,
  untilCallerHangsUp,
} from '@parley/testing/digital-employees/responder-fixtures';
import {
  TestBot,
  writeChatCompletionStream,
  writeToolCallStream,
} from '@parley/testing/digital-employees/test-bots';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  bearer,
  connectToNewConversation,
  fetchPlatformToken,
  listMessages,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';

const MODEL = 'parley-test-model';
const ORDER_SCHEMA = {
  type: 'object',
  properties: { order_id: { type: 'string' }, include: { type: 'string', enum: ['items', 'tracking'] } },
  required: ['order_id'],
  additionalProperties: false,
};

interface ChatBody {
  stream?: boolean;
  tools?: Array<{ type: string; function: { name: string; parameters: unknown } }>;
  messages: Array<{ role: string; content: string | null; tool_call_id?: string; tool_calls?: unknown[] }>;
}

for (const database of TEST_DATABASES) {
  describe(`digital-employee actions (${database})`, () => {
    let server: TestServer;
    let model: TestBot;
    let service: TestBot;
    before(async () => {
      server = await startTestServer({ database, config: { webchat: { actionTimeoutMs: 500 } } });
      model = await TestBot.start();
      service = await TestBot.start();
    });
    after(async () => {
      await model.close();
      await service.close();
      await server.close();
    });

    /** A company whose default employee is `openai` (the model server) with an http connector to `service`. */
    async function setup() {
      const modelKey = `sk-${randomUUID()}`;
      const { companyId, employee } = await createCompanyWithConnector(
        server,
        'openai',
        `${model.url}/v1`,
        modelKey,
        {
          model: MODEL,
          systemPrompt: 'You are Ava.',
        },
      );
      await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
      const apiKey = `key-${randomUUID()}`;
      const connector = await server.ctx.connectors.create(
        { companyId, name: 'shop api', type: 'http', url: `${service.url}/api`, apiKey },
        { actor: 'test' },
      );
      const token = await fetchPlatformToken(server, companyId, [
        'digital_employees:read',
        'digital_employees:write',
        'conversations:read',
      ]);
      return { companyId, employee, connectorId: connector.id, apiKey, token };
    }

    const actionsUrl = (employeeId: string) =>
      `${server.baseUrl}/platform/v1/digital-employees/${employeeId}/actions`;
    const lookupOrder = (connectorId: string) => ({
      name: 'lookup_order',
      description: 'Looks an order up by its id.',
      parameters: ORDER_SCHEMA,
      connector_id: connectorId,
      method: 'GET',
      path: '/orders/{order_id}',
      status_text: 'Looking up your order…',
    });

    it('adds, lists and deletes actions, refusing bad names, schemas, connectors and other companies', async () => {
      const { companyId, employee, connectorId, token } = await setup();
      const created = await http(actionsUrl(employee.id), bearer(token, lookupOrder(connectorId)));
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.name, 'lookup_order');
      assert.deepEqual(created.body.parameters, ORDER_SCHEMA);
      const again = await http(actionsUrl(employee.id), bearer(token, lookupOrder(connectorId)));
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'action_name_taken');

      const bad = async (change: Record<string, unknown>, field: string, code = 'invalid_action') => {
        const res = await http(
          actionsUrl(employee.id),
          bearer(token, { ...lookupOrder(connectorId), ...change }),
        );
        assert.equal(res.status, 400, `${JSON.stringify(change)}: ${res.text}`);
        assert.equal(res.body.code, code);
        if (code === 'invalid_action') assert.equal(res.body.errors[0].field, field);
      };
      await bad({ name: 'Lookup-Order' }, 'name');
      await bad({ name: 'x'.repeat(65) }, 'name');
      await bad({ name: 'handover' }, 'name');
      await bad(
        { name: 'a1', parameters: { type: 'object', properties: { a: { type: 'strin' } } } },
        'parameters',
      );
      await bad({ name: 'a2', parameters: { type: 'array' } }, 'parameters');
      await bad({ name: 'a3', path: '/orders/{missing}' }, 'path');
      await bad({ name: 'a4', connector_id: randomUUID() }, 'connector_id', 'connector_not_found');
      const openaiConnector = employee.connectorId!;
      await bad({ name: 'a5', connector_id: openaiConnector }, 'connector_id');

      const listed = await http(actionsUrl(employee.id), bearer(token));
      assert.equal(listed.status, 200);
      assert.deepEqual(
        listed.body.actions.map((a: { name: string }) => a.name),
        ['lookup_order'],
      );

      const other = await server.ctx.companies.create(`Other ${randomUUID()}`);
      const otherToken = await fetchPlatformToken(server, other.id, [
        'digital_employees:read',
        'digital_employees:write',
      ]);
      assert.equal((await http(actionsUrl(employee.id), bearer(otherToken))).status, 404);
      const readOnly = await fetchPlatformToken(server, companyId, ['digital_employees:read']);
      assert.equal(
        (await http(actionsUrl(employee.id), bearer(readOnly, lookupOrder(connectorId)))).status,
        403,
      );

      const del = (id: string) =>
        http(`${actionsUrl(employee.id)}/${id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${token}` },
        });
      assert.equal((await del(created.body.id)).status, 204);
      const gone = await del(created.body.id);
      assert.equal(gone.status, 404);
      assert.equal(gone.body.code, 'action_not_found');
    });

    it('offers actions as tools, calls the connector with its current key and streams on; agents see the call', async () => {
      const { companyId, employee, connectorId, apiKey, token } = await setup();
      assert.equal(
        (await http(actionsUrl(employee.id), bearer(token, lookupOrder(connectorId)))).status,
        201,
      );
      // Rotated right before the call: the new key must be the one sent.
      const newKey = `key-${randomUUID()}`;
      await rotateThroughApi(server, companyId, connectorId, newKey);

      let calls = 0;
      model.handler = (req, res) => {
        calls += 1;
        const body = req.body as ChatBody;
        if (!body.messages.some((m) => m.role === 'tool'))
          return writeToolCallStream(res, MODEL, [
            { id: 'call_1', name: 'lookup_order', arguments: '{"order_id":"A/17 b","include":"tracking"}' },
          ]);
        return writeChatCompletionStream(res, MODEL, ['Your order ', 'has shipped.']);
      };
      let visitor: Awaited<ReturnType<typeof connectToNewConversation>>['c'] | undefined;
      service.handler = async (_req, res) => {
        // The action answers once the visitor has been shown its status, so what the test sees does not hang on
        // whether a flush of the stream happened to land while the call ran.
        await visitor?.log.waitFor(
          (e) => e.some((x) => x.message_snapshot.blocks.some((b) => b.type === 'status')),
          10_000,
          'the action status',
        );
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ order: 'A/17 b', state: 'shipped' }));
      };
      const before = { model: model.requests.length, service: service.requests.length };
      const v = newVisitor(companyId);
      const { conversation, c } = await connectToNewConversation(server, v);
      visitor = c;
      try {
        await sendMessage(c.sub, 'Where is my order A/17 b?');
        const done = await c.log.waitFor(
          (e) => e.some((x) => x.operation === 'complete' && x.message_snapshot.role === 'digital_employee'),
          15_000,
          'the reply',
        );
        const reply = done.find(
          (x) => x.operation === 'complete' && x.message_snapshot.role === 'digital_employee',
        )!;
        const text = reply.message_snapshot.blocks.find((b) => b.type === 'markdown');
        assert.equal((text as { content: string }).content, 'Your order has shipped.');
        assert.ok(!reply.message_snapshot.blocks.some((b) => b.type === 'status'), 'no status once complete');
        const statuses = c.log
          .of(reply.message_snapshot.id)
          .flatMap((e) => e.message_snapshot.blocks.filter((b) => b.type === 'status'));
        assert.ok(
          statuses.some((b) => (b as { text: string }).text === 'Looking up your order…'),
          'the visitor saw the status while the action ran',
        );

        const [first, second] = model.requests.slice(before.model) as Array<{ body: ChatBody }>;
        assert.equal(calls - 0 >= 2, true);
        assert.deepEqual(
          first!.body.tools!.map((t) => t.function.name),
          ['lookup_order', 'handover'],
        );
        assert.deepEqual(first!.body.tools![0]!.function.parameters, ORDER_SCHEMA);
        const toolMessage = second!.body.messages.find((m) => m.role === 'tool')!;
        assert.equal(toolMessage.tool_call_id, 'call_1');
        assert.deepEqual(JSON.parse(toolMessage.content!), { order: 'A/17 b', state: 'shipped' });
        assert.ok(
          second!.body.messages.some((m) => m.role === 'assistant' && m.tool_calls),
          'the call is replayed',
        );

        const [call] = service.requests.slice(before.service);
        assert.equal(call!.method, 'GET');
        assert.equal(call!.path, '/api/orders/A%2F17%20b?include=tracking');
        assert.equal(call!.authorization, `Bearer ${newKey}`);
        assert.notEqual(call!.authorization, `Bearer ${apiKey}`);

        const platform = await http(
          `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
          bearer(token),
        );
        const note = await waitFor('the action note', async () => {
          const res = await http(
            `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
            bearer(token),
          );
          return res.body.messages.find((m: { role: string }) => m.role === 'note');
        });
        assert.ok(platform.status === 200);
        assert.match(note.blocks[0].content, /lookup_order/);
        assert.match(note.blocks[0].content, /HTTP 200/);
        assert.match(note.blocks[0].content, /shipped/);
        const sdk = await listMessages(server, v, conversation.id);
        assert.ok(!sdk.text.includes('lookup_order'), 'the visitor never sees the call');
        assert.ok(!JSON.stringify(c.log.envelopes).includes('lookup_order'));

        const audit = await server.ctx.audit.list({ companyId, type: 'digital_employee.action_called' });
        assert.equal(audit.length, 1);
        assert.equal(audit[0]!.details.action, 'lookup_order');
        assert.equal(audit[0]!.details.connector_id, connectorId);
        assert.equal(audit[0]!.details.status, 200);
        assert.equal(typeof audit[0]!.details.duration_ms, 'number');
        assert.ok(!JSON.stringify(audit).includes(newKey) && !JSON.stringify(audit).includes(apiKey));
        assert.ok(!server.logs.join('\n').includes(newKey), 'the key is never logged');
      } finally {
        c.close();
      }
    });

    it('refuses arguments that break the schema (nothing is called) and reports it to the model', async () => {
      const { companyId, employee, connectorId, token } = await setup();
      assert.equal(
        (await http(actionsUrl(employee.id), bearer(token, lookupOrder(connectorId)))).status,
        201,
      );
      model.handler = (req, res) => {
        const body = req.body as ChatBody;
        if (!body.messages.some((m) => m.role === 'tool'))
          return writeToolCallStream(res, MODEL, [
            { id: 'call_x', name: 'lookup_order', arguments: '{"order_id":17}' },
          ]);
        return writeChatCompletionStream(res, MODEL, ['Could you give me the order number again?']);
      };
      const before = { model: model.requests.length, service: service.requests.length };
      const { c } = await connectToNewConversation(server, newVisitor(companyId));
      try {
        await sendMessage(c.sub, 'order 17');
        await c.log.waitFor((e) =>
          e.some((x) => x.operation === 'complete' && x.message_snapshot.role === 'digital_employee'),
        );
        assert.equal(service.requests.length, before.service, 'the connector was not called');
        const second = model.requests.slice(before.model)[1] as { body: ChatBody };
        const tool = second.body.messages.find((m) => m.role === 'tool')!;
        assert.match(tool.content!, /Invalid arguments/);
        assert.match(tool.content!, /order_id/);
      } finally {
        c.close();
      }
    });

    /** The conversation as agents read it: who handles it, and since when it waits for a person. */
    const conversationOf = async (token: string, id: string) => {
      const res = await http(`${server.baseUrl}/platform/v1/conversations/${id}`, bearer(token));
      assert.equal(res.status, 200, res.text);
      return res.body as { handled_by: string; queued_at: string | null };
    };
    const handedOver = (c: { handled_by: string; queued_at: string | null }) =>
      c.handled_by === 'agent' || c.queued_at !== null;

    it('the handover tool is offered by default and hands over; settings.handover_tool false withholds it', async () => {
      const { companyId, employee, token } = await setup();
      model.handler = (req, res) => {
        const body = req.body as ChatBody;
        if (!body.messages.some((m) => m.role === 'tool'))
          return writeToolCallStream(res, MODEL, [
            { id: 'call_h', name: 'handover', arguments: '{"reason":"asks for a person"}' },
          ]);
        return writeChatCompletionStream(res, MODEL, ['Let me see what I can do.']);
      };
      /** One visitor question; returns the model's requests of that reply and the conversation afterwards. */
      const ask = async () => {
        const before = model.requests.length;
        const { conversation, c } = await connectToNewConversation(server, newVisitor(companyId));
        try {
          await sendMessage(c.sub, 'I want to talk to a person.');
          await c.log.waitFor((e) =>
            e.some((x) => x.operation === 'complete' && x.message_snapshot.role === 'digital_employee'),
          );
        } finally {
          c.close();
        }
        // Streamed requests only: the hand-over summary's request (not streamed) comes after the reply.
        const requests = (model.requests.slice(before) as Array<{ body: ChatBody }>).filter(
          (r) => r.body.stream,
        );
        return { requests, id: conversation.id };
      };

      const on = await ask();
      assert.deepEqual(
        on.requests[0]!.body.tools!.map((t) => t.function.name),
        ['handover'],
      );
      await waitFor('the hand-over', async () => handedOver(await conversationOf(token, on.id)));

      await server.ctx.digitalEmployees.update(companyId, employee.id, {
        settings: { handover_tool: false },
      });
      const off = await ask();
      assert.equal(off.requests[0]!.body.tools, undefined, 'no tools at all: the employee has no actions');
      // A call of a tool that was not offered is not run: the reply ends with what the model said.
      assert.equal(off.requests.length, 1);
      const after = await conversationOf(token, off.id);
      assert.equal(after.handled_by, 'digital_employee');
      assert.equal(after.queued_at, null, 'the model could not hand over');

      // The setting is the openai employee's alone: others refuse it.
      await assert.rejects(
        server.ctx.digitalEmployees.update(companyId, employee.id, {
          responder: 'builtin',
          connectorId: null,
          model: null,
          systemPrompt: null,
          settings: { handover_tool: true },
        }),
        (err: { code?: string }) => err.code === 'invalid_settings',
      );
    });

    it('a slow action times out into a clear tool result and the reply still completes', async () => {
      const { companyId, employee, connectorId, token } = await setup();
      assert.equal(
        (await http(actionsUrl(employee.id), bearer(token, lookupOrder(connectorId)))).status,
        201,
      );
      model.handler = (req, res) => {
        const body = req.body as ChatBody;
        if (!body.messages.some((m) => m.role === 'tool'))
          return writeToolCallStream(res, MODEL, [
            { id: 'call_s', name: 'lookup_order', arguments: '{"order_id":"9"}' },
          ]);
        return writeChatCompletionStream(res, MODEL, ['The order system is slow right now.']);
      };
      service.handler = (_req, res) => untilCallerHangsUp(res);
      const before = model.requests.length;
      const { c } = await connectToNewConversation(server, newVisitor(companyId));
      try {
        await sendMessage(c.sub, 'order 9?');
        const done = await c.log.waitFor((e) =>
          e.some((x) => x.operation === 'complete' && x.message_snapshot.role === 'digital_employee'),
        );
        const reply = done.find(
          (x) => x.operation === 'complete' && x.message_snapshot.role === 'digital_employee',
        )!;
        assert.ok(!reply.message_snapshot.blocks.some((b) => b.type === 'error'), 'completed, not failed');
        const second = model.requests.slice(before)[1] as { body: ChatBody };
        assert.match(
          second.body.messages.find((m) => m.role === 'tool')!.content!,
          /did not answer within 500 ms/,
        );
      } finally {
        c.close();
      }
    });
  });
}
