import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { after, before } from 'node:test';
import type { DigitalEmployee } from '@parley/server/internal/digital-employees/digital-employees.service';
import type { DigitalEmployeeSettings } from '@parley/server/internal/digital-employees/digital-employees.settings';
import { createResponder } from '@parley/server/internal/digital-employees/responders/create-responder';
import type {
  ReplyChunk,
  RespondInput,
} from '@parley/server/internal/digital-employees/responders/responder';
import { ResponderError } from '@parley/server/internal/digital-employees/responders/responder-errors';
import type { MessageRole, MessageSnapshot } from '@parley/webchat-protocol';
import type { TestDatabase } from '../databases.ts';
import { startTestServer, type TestServer } from '../test-server.ts';
import { type BotHandler, TestBot } from './test-bots.ts';
import { messageOf } from './test-messages.ts';

/**
 * A bot that says nothing more until the caller hangs up: resolves when `res`'s connection closes (the responder
 * gave up), or after `boundMs` so a responder that never gives up fails its test instead of holding it.
 */
export function untilCallerHangsUp(res: ServerResponse, boundMs = 20_000): Promise<void> {
  return new Promise((resolve) => {
    const bound = setTimeout(resolve, boundMs);
    res.on('close', () => {
      clearTimeout(bound);
      resolve();
    });
  });
}

/** A company with a real connector (key sealed in the store) and a digital employee that uses it. */
export async function createCompanyWithConnector(
  server: TestServer,
  type: 'webhook' | 'openai',
  url: string,
  apiKey: string | undefined,
  employee: { model?: string; systemPrompt?: string | null; settings?: DigitalEmployeeSettings } = {},
): Promise<{ companyId: string; connectorId: string; employee: DigitalEmployee }> {
  const company = await server.ctx.companies.create(
    `${type} company ${Math.random().toString(36).slice(2, 8)}`,
  );
  const connector = await server.ctx.connectors.create(
    { companyId: company.id, name: `${type} bot`, type, url, ...(apiKey ? { apiKey } : {}) },
    { actor: 'test' },
  );
  const created = await server.ctx.digitalEmployees.create({
    companyId: company.id,
    name: type === 'openai' ? 'Model' : 'Hooky',
    responder: type,
    connectorId: connector.id,
    model: employee.model ?? null,
    systemPrompt: employee.systemPrompt ?? null,
    settings: employee.settings ?? {},
  });
  return { companyId: company.id, connectorId: connector.id, employee: created };
}

/**
 * Rotates a connector key the way an integrator does (docs/design.md): an API client with `connector:write` gets a token
 * from the token endpoint and PUTs the new key.
 */
export async function rotateThroughApi(
  server: TestServer,
  companyId: string,
  connectorId: string,
  apiKey: string,
): Promise<void> {
  const { client, secret } = await server.ctx.oauth.clients.create({
    companyId,
    name: 'key rotator',
    scopes: ['connector:write'],
  });
  const tokenResponse = await fetch(`${server.baseUrl}/platform/v1/auth/token/client-credentials`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client.clientId}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials&scope=connector%3Awrite',
  });
  assert.equal(tokenResponse.status, 200);
  const { access_token } = (await tokenResponse.json()) as { access_token: string };
  const put = await fetch(`${server.baseUrl}/integrations/v1/connectors/api-keys/${connectorId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: apiKey }),
  });
  assert.ok(put.status >= 200 && put.status < 300, `rotation answered ${put.status}`);
  assert.ok(!(await put.text()).includes(apiKey), 'the rotation response must not echo the key');
}

/** Asserts that nothing a failed call left behind (error message, serialised error) holds the key. */
export function assertNoKey(err: unknown, apiKey: string): void {
  const e = err as Error;
  assert.ok(!String(e?.message).includes(apiKey));
  assert.ok(!JSON.stringify(e).includes(apiKey));
  assert.ok(!String(e?.stack).includes(apiKey));
}

/** Runs `employee`'s responder (as the conversation engine builds it) on `input`. */
export function respondAs(
  server: TestServer,
  employee: DigitalEmployee,
  input: Omit<RespondInput, 'digitalEmployee'>,
): AsyncIterable<ReplyChunk> {
  return createResponder(employee, {
    connectors: server.ctx.connectorCaller,
    knowledge: server.ctx.knowledge,
  }).respond({
    ...input,
    digitalEmployee: employee,
  });
}

/** A new conversation's responder input: `history` as [role, content, extra?] rows, then the user's `text`. */
export function conversationWith(
  companyId: string,
  history: Array<[MessageRole, string, Partial<MessageSnapshot>?]>,
  text: string,
  signal: AbortSignal,
) {
  const conversationId = randomUUID();
  return {
    companyId,
    conversationId,
    message: messageOf(conversationId, 'user', text),
    history: history.map(([role, content, extra]) => messageOf(conversationId, role, content, extra)),
    signal,
  };
}

/** Drains `deltas` into `received` and returns the ResponderError it ends with; fails if it ends without one. */
export async function failureOf(
  deltas: AsyncIterable<ReplyChunk>,
  received: ReplyChunk[] = [],
): Promise<ResponderError> {
  try {
    for await (const delta of deltas) received.push(delta);
  } catch (err) {
    assert.ok(err instanceof ResponderError, `expected a ResponderError, got ${err}`);
    return err;
  }
  assert.fail('expected the responder to fail');
}

/**
 * Runs a reply and aborts its signal as soon as the first delta arrives (a visitor leaving, an agent taking over);
 * returns the ResponderError it ends with.
 */
export function failureAbortingAfterFirstDelta(
  start: (signal: AbortSignal) => AsyncIterable<ReplyChunk>,
  received: ReplyChunk[],
): Promise<ResponderError> {
  const controller = new AbortController();
  const deltas = start(controller.signal);
  return failureOf(
    (async function* () {
      for await (const delta of deltas) {
        yield delta;
        controller.abort();
      }
    })(),
    received,
  );
}

/** Asserts that none of `keys` appears in the server's log. */
export function assertNoKeyInLogs(server: TestServer, ...keys: string[]): void {
  assert.ok(
    keys.every((key) => !server.logs.join('\n').includes(key)),
    'no key in the server log',
  );
}

/**
 * Asserts that a reply fails with responder_timeout both when the remote stays silent and when its stream stalls,
 * and that the deltas sent before the stall were passed on (a cut-off reply is never reported as complete).
 */
export async function assertTimesOut(
  bot: TestBot,
  run: () => AsyncIterable<ReplyChunk>,
  handlers: { silent: BotHandler; stalled: BotHandler },
  deltasBeforeStall: string[],
): Promise<void> {
  bot.handler = handlers.silent;
  assert.equal((await failureOf(run())).code, 'responder_timeout');

  bot.handler = handlers.stalled;
  const received: ReplyChunk[] = [];
  assert.equal((await failureOf(run(), received)).code, 'responder_timeout');
  assert.deepEqual(received, deltasBeforeStall);
}

/**
 * Starts a test server on `database` and a TestBot before the suite's tests (handing both to `ready`) and closes
 * them after.
 */
export function startServerAndBotPerSuite(
  database: TestDatabase,
  ready: (server: TestServer, bot: TestBot) => void,
): void {
  let server: TestServer;
  let bot: TestBot;
  before(async () => {
    server = await startTestServer({ database });
    bot = await TestBot.start();
    ready(server, bot);
  });
  after(async () => {
    await bot.close();
    await server.close();
  });
}
