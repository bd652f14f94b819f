import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
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
import { TestBot } from '@parley/testing/digital-employees/test-bots';
import { collect } from '@parley/testing/digital-employees/test-messages';
import type { TestServer } from '@parley/testing/test-server';
import type { DigitalEmployee } from '../digital-employees.service.ts';
import { createResponder } from './create-responder.ts';
import type { ReplyChunk, RespondInput } from './responder.ts';

for (const database of TEST_DATABASES) {
  describe(`webhook responder (${database})`, () => {
    let server: TestServer;
    let bot: TestBot;
    startServerAndBotPerSuite(database, (startedServer, startedBot) => {
      server = startedServer;
      bot = startedBot;
    });

    const KEY = `whk_${randomUUID()}`;
    const respond = (employee: DigitalEmployee, input: Omit<RespondInput, 'digitalEmployee'>) =>
      respondAs(server, employee, input);

    const conversation = (companyId: string, signal = new AbortController().signal) =>
      conversationWith(
        companyId,
        [
          ['digital_employee', 'Hi, how can I help?'],
          ['user', 'I need help'],
          ['agent', 'Sam here'],
        ],
        'Where is my **order**?',
        signal,
      );

    it('POSTs the conversation with the bearer key and yields a JSON reply', async () => {
      const { companyId, employee } = await createCompanyWithConnector(
        server,
        'webhook',
        `${bot.url}/hooks/parley?v=1`,
        KEY,
      );
      bot.handler = (_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"reply":"It ships **today**."}');
      const input = conversation(companyId);
      const before = bot.requests.length;
      assert.deepEqual(await collect(respond(employee, input)), ['It ships **today**.']);
      const [request] = bot.requests.slice(before);
      assert.equal(request!.method, 'POST');
      assert.equal(request!.path, '/hooks/parley?v=1');
      assert.equal(request!.authorization, `Bearer ${KEY}`);
      assert.match(request!.contentType ?? '', /^application\/json/);
      assert.deepEqual(request!.body, {
        conversation_id: input.conversationId,
        company_id: companyId,
        message: input.message,
        history: input.history,
      });
    });

    it('yields NDJSON deltas as they arrive, before the bot has finished', async () => {
      const { companyId, employee } = await createCompanyWithConnector(server, 'webhook', bot.url, KEY, {
        settings: { timeout_ms: 5000 },
      });
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      bot.handler = async (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.write('{"delta":"Your order "}\n');
        await released;
        res.write('{"delta":"is on "}\r\n\n{"delta":"its way."}');
        res.end();
      };
      const received: ReplyChunk[] = [];
      for await (const delta of respond(employee, conversation(companyId))) {
        received.push(delta);
        if (received.length === 1) release();
      }
      assert.deepEqual(received, ['Your order ', 'is on ', 'its way.']);
    });

    it('sends only the newest history_limit earlier messages', async () => {
      const { companyId, employee } = await createCompanyWithConnector(server, 'webhook', bot.url, KEY, {
        settings: { history_limit: 1 },
      });
      bot.handler = (_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"reply":"ok"}');
      const input = conversation(companyId);
      await collect(respond(employee, input));
      assert.deepEqual((bot.requests.at(-1)!.body as { history: unknown }).history, [input.history[2]]);
    });

    it('reports non-2xx, wrong content types and malformed answers as typed errors without the key', async () => {
      const { companyId, employee } = await createCompanyWithConnector(server, 'webhook', bot.url, KEY);
      const cases: Array<[(res: import('node:http').ServerResponse) => void, string, string[]?]> = [
        [
          (res) => res.writeHead(503, { 'content-type': 'application/json' }).end('{"reply":"down"}'),
          'responder_http_error',
        ],
        [(res) => res.writeHead(401).end(`bad key ${KEY}`), 'responder_http_error'],
        [
          (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello'),
          'responder_bad_response',
        ],
        [
          (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"hi"}'),
          'responder_bad_response',
        ],
        [
          (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"reply":'),
          'responder_bad_response',
        ],
        [
          (res) =>
            res.writeHead(200, { 'content-type': 'application/x-ndjson' }).end('{"delta":"ok "}\nnot json\n'),
          'responder_bad_response',
          ['ok '],
        ],
        [
          (res) => res.writeHead(200, { 'content-type': 'application/x-ndjson' }).end('{"delta":1}\n'),
          'responder_bad_response',
        ],
        [
          (res) => res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end(),
          'responder_misconfigured',
        ],
      ];
      for (const [handler, code, expectedDeltas = []] of cases) {
        bot.handler = (_req, res) => handler(res);
        const received: ReplyChunk[] = [];
        const err = await failureOf(respond(employee, conversation(companyId)), received);
        assert.equal(err.code, code, handler.toString());
        assert.deepEqual(received, expectedDeltas);
        assertNoKey(err, KEY);
      }
      bot.handler = (_req, res) => res.writeHead(503).end();
      assert.equal((await failureOf(respond(employee, conversation(companyId)))).status, 503);
    });

    it('times out on a silent bot and on a stream that stalls', async () => {
      const { companyId, employee } = await createCompanyWithConnector(server, 'webhook', bot.url, KEY, {
        settings: { timeout_ms: 1000 },
      });
      await assertTimesOut(
        bot,
        () => respond(employee, conversation(companyId)),
        {
          silent: async (_req, res) => {
            await untilCallerHangsUp(res);
            res.writeHead(200, { 'content-type': 'application/json' }).end('{"reply":"late"}');
          },
          stalled: async (_req, res) => {
            res.writeHead(200, { 'content-type': 'application/x-ndjson' }).write('{"delta":"first "}\n');
            await untilCallerHangsUp(res);
            res.end('{"delta":"never"}\n');
          },
        },
        ['first '],
      );
    });

    it('keeps streaming while the bot keeps talking, however long the whole reply takes', async () => {
      const { companyId, employee } = await createCompanyWithConnector(server, 'webhook', bot.url, KEY, {
        settings: { timeout_ms: 1000 },
      });
      bot.handler = async (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        // Paced slower than nothing at all, faster than the 1 s idle limit: the bot's own rhythm, not a wait.
        for (let i = 0; i < 6; i++) {
          res.write(`{"delta":"${i}"}\n`);
          await sleep(250);
        }
        res.end();
      };
      assert.deepEqual(await collect(respond(employee, conversation(companyId))), [
        '0',
        '1',
        '2',
        '3',
        '4',
        '5',
      ]);
    });

    it('aborts the call when the signal fires and reports responder_aborted', async () => {
      const { companyId, employee } = await createCompanyWithConnector(server, 'webhook', bot.url, KEY, {
        settings: { timeout_ms: 5000 },
      });
      let closed!: Promise<void>;
      bot.handler = async (_req, res) => {
        closed = untilCallerHangsUp(res);
        res.writeHead(200, { 'content-type': 'application/x-ndjson' }).write('{"delta":"Thinking"}\n');
        await closed;
        res.end();
      };
      const received: ReplyChunk[] = [];
      const failure = failureAbortingAfterFirstDelta(
        (signal) => respond(employee, conversation(companyId, signal)),
        received,
      );
      assert.equal((await failure).code, 'responder_aborted');
      assert.deepEqual(received, ['Thinking']);
      await closed; // the bot saw its connection go away
    });

    it('reports an unreachable bot and a connector without a key', async () => {
      const gone = await TestBot.start();
      const goneUrl = gone.url;
      await gone.close();
      const unreachable = await createCompanyWithConnector(server, 'webhook', goneUrl, KEY);
      const err = await failureOf(respond(unreachable.employee, conversation(unreachable.companyId)));
      assert.equal(err.code, 'responder_unreachable');
      assertNoKey(err, KEY);

      const keyless = await createCompanyWithConnector(server, 'webhook', bot.url, undefined);
      const before = bot.requests.length;
      assert.equal(
        (await failureOf(respond(keyless.employee, conversation(keyless.companyId)))).code,
        'responder_misconfigured',
      );
      assert.equal(bot.requests.length, before, 'nothing is sent without a key');
    });

    it('uses a rotated key on the very next call and never the old one again', async () => {
      const { companyId, connectorId, employee } = await createCompanyWithConnector(
        server,
        'webhook',
        bot.url,
        KEY,
      );
      bot.handler = (req, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ reply: `auth ${req.authorization?.length}` }));
      await collect(respond(employee, conversation(companyId)));
      assert.equal(bot.requests.at(-1)!.authorization, `Bearer ${KEY}`);

      const newKey = `whk_rotated_${randomUUID()}`;
      await rotateThroughApi(server, companyId, connectorId, newKey);
      const afterRotation = bot.requests.length;
      // The same responder object and the same employee: nothing is cached between calls.
      const responder = createResponder(employee, { connectors: server.ctx.connectorCaller });
      for (let i = 0; i < 2; i++)
        await collect(responder.respond({ ...conversation(companyId), digitalEmployee: employee }));
      const seen = bot.requests.slice(afterRotation).map((r) => r.authorization);
      assert.deepEqual(seen, [`Bearer ${newKey}`, `Bearer ${newKey}`]);
      assertNoKeyInLogs(server, KEY, newKey);
    });
  });
}
