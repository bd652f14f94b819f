import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { COMMAND_METHODS, type CommandMethod } from '@parley/realtime';
import { TEST_DATABASES } from '@parley/testing/databases';
import type { TestServer } from '@parley/testing/test-server';
import { startTestServer } from '@parley/testing/test-server';
import {
  createConversation,
  newVisitor,
  sdkPost,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';
import WebSocket from 'ws';
import { REALTIME_VALUES } from './attacks.ts';

/**
 * The hostile-input suite over the realtime protocol (JSON over WebSocket, as the webchat serves it): every command
 * of the protocol, every field it reads, each given every hostile value of attacks.ts — deep JSON (up to 25,000
 * levels), U+0000, unpaired surrogates, oversize strings, wrong types — on a connection that is connected and
 * subscribed to its own conversation (so a publish reaches the webchat's hook). The bar: no reply error 100
 * (internal), no close 3004 (internal), no error in the server log. Refusals (103, 107, 400, 3501 …) are the point.
 */

/** The request fields each command reads (docs/protocol.md "Commands and replies"). */
const FIELDS: Record<CommandMethod, string[]> = {
  connect: ['token', 'data', 'subs', 'name', 'version'],
  subscribe: [
    'channel',
    'token',
    'data',
    'recover',
    'offset',
    'epoch',
    'positioned',
    'recoverable',
    'join_leave',
    'delta',
    'flag',
  ],
  unsubscribe: ['channel'],
  publish: ['channel', 'data'],
  presence: ['channel'],
  presence_stats: ['channel'],
  history: ['channel', 'limit', 'since', 'reverse'],
  ping: [],
  send: ['data'],
  rpc: ['method', 'data'],
  refresh: ['token'],
  sub_refresh: ['channel', 'token'],
};

/** Codes that mean the engine failed rather than refused. */
const INTERNAL_REPLY = 100;
const INTERNAL_CLOSE = 3004;

interface Outcome {
  reply?: { code: number; message: string };
  closeCode?: number;
}

for (const database of TEST_DATABASES) {
  describe(`hostile input over the realtime protocol, every command (${database})`, () => {
    let server: TestServer;
    let visitor: Visitor;
    let channel: string;
    let connectionToken: string;
    let subscriptionToken: string;
    const wsUrl = () => `${server.baseUrl.replace('http', 'ws')}/connection/websocket`;

    before(async () => {
      server = await startTestServer({ database });
      const company = await server.ctx.companies.create('Hostile Realtime Co');
      visitor = newVisitor(company.id);
      const conversation = await createConversation(server, visitor);
      channel = conversation.channel;
      connectionToken = (await sdkPost(server, visitor, '/auth/connect-token')).body.connection_token;
      subscriptionToken = (
        await sdkPost(server, visitor, '/auth/subscribe-token', { conversation_id: conversation.id })
      ).body.subscription_token;
    });
    after(() => server.close());

    /** A plausible request of each command, before one of its fields is made hostile (JSON text per field). */
    const baseOf = (method: CommandMethod): Record<string, string> => {
      const base: Record<CommandMethod, Record<string, string>> = {
        connect: { token: JSON.stringify(connectionToken) },
        subscribe: { channel: JSON.stringify(channel), token: JSON.stringify(subscriptionToken) },
        unsubscribe: { channel: JSON.stringify(channel) },
        publish: {
          channel: JSON.stringify(channel),
          data: '{"version":1,"client_message_id":"00000000-0000-4000-8000-000000000001","blocks":[{"type":"markdown","content":"hi"}]}',
        },
        presence: { channel: JSON.stringify(channel) },
        presence_stats: { channel: JSON.stringify(channel) },
        history: { channel: JSON.stringify(channel), limit: '10' },
        ping: {},
        send: { data: '{}' },
        rpc: { method: '"m"', data: '{}' },
        refresh: { token: JSON.stringify(connectionToken) },
        sub_refresh: { channel: JSON.stringify(channel), token: JSON.stringify(subscriptionToken) },
      };
      return base[method];
    };

    const commandText = (id: number, method: CommandMethod, fields: Record<string, string>) =>
      `{"id":${method === 'send' ? 0 : id},"${method}":{${Object.entries(fields)
        .map(([k, v]) => `"${k}":${v}`)
        .join(',')}}}`;

    /**
     * Opens a connection, connects (unless the hostile command is the connect), subscribes to the conversation
     * (unless it is the subscribe), sends `hostile` and answers the reply to it, or how the connection closed.
     */
    function run(method: CommandMethod, hostile: string): Promise<Outcome> {
      return new Promise((resolve) => {
        const ws = new WebSocket(wsUrl());
        const outcome: Outcome = {};
        const done = () => {
          clearTimeout(timer);
          ws.terminate();
          resolve(outcome);
        };
        // A command without a reply (`send`) or one refused by a close: wait a little for either.
        const timer = setTimeout(done, method === 'send' ? 300 : 5_000);
        ws.on('error', () => undefined);
        ws.on('close', (code) => {
          outcome.closeCode = code;
          done();
        });
        ws.on('message', (data) => {
          for (const line of data.toString().split('\n')) {
            const message = JSON.parse(line) as { id?: number; error?: { code: number; message: string } };
            if (message.id === 1 && message.error) {
              outcome.reply = message.error;
              return done();
            }
            if (message.id === 1 && method !== 'connect') {
              ws.send(
                method === 'subscribe'
                  ? hostile
                  : `${commandText(2, 'subscribe', baseOf('subscribe'))}\n${hostile}`,
              );
            }
            if (message.id === 3 || (message.id === 1 && method === 'connect')) {
              if (message.error) outcome.reply = message.error;
              return done();
            }
            if (message.id === 2 && message.error && method !== 'subscribe') outcome.reply = message.error;
          }
        });
        ws.on('open', () =>
          ws.send(method === 'connect' ? hostile : commandText(1, 'connect', baseOf('connect'))),
        );
      });
    }

    it('knows the fields of every command of the protocol', () => {
      assert.deepEqual(Object.keys(FIELDS).sort(), [...COMMAND_METHODS].sort());
    });

    for (const method of COMMAND_METHODS) {
      it(`${method}: every field, every hostile value → a refusal or an answer, never an internal error`, async () => {
        const logsFrom = server.logs.length;
        const broken: string[] = [];
        const id = method === 'connect' ? 1 : 3;
        const variants: Array<{ what: string; text: string }> = [];
        for (const value of REALTIME_VALUES) {
          // The whole request replaced, then each field in turn.
          variants.push({
            what: `${method} = ${value.name}`,
            text: `{"id":${id},"${method}":${value.json}}`,
          });
          for (const field of FIELDS[method]) {
            variants.push({
              what: `${method}.${field} = ${value.name}`,
              text: commandText(id, method, { ...baseOf(method), [field]: value.json }),
            });
          }
        }
        for (const variant of variants) {
          const outcome = await run(method, variant.text);
          if (outcome.reply?.code === INTERNAL_REPLY || outcome.closeCode === INTERNAL_CLOSE)
            broken.push(`${variant.what} → ${JSON.stringify(outcome)}`);
        }
        const errors = server.logs
          .slice(logsFrom)
          .filter((line) => (JSON.parse(line) as { level: number }).level >= 50)
          .map((line) => `logged: ${line.slice(0, 300)}`);
        assert.deepEqual([...broken, ...errors], []);
      });
    }
  });
}
