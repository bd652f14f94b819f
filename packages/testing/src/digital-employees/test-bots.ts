import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  /** The W3C trace context the caller sent (packages/server/src/tracing/). */
  traceparent: string | undefined;
  body: unknown;
}

export type BotHandler = (request: RecordedRequest, res: ServerResponse) => unknown;

/**
 * A real HTTP server on 127.0.0.1 (ephemeral port) standing in for a company's bot or an OpenAI-compatible API in
 * responder tests: it records every request (path, bearer, JSON body) and answers with whatever the test sets.
 */
export class TestBot {
  readonly requests: RecordedRequest[] = [];
  handler: BotHandler = (_req, res) => res.writeHead(500).end();
  private readonly sockets = new Set<import('node:net').Socket>();

  private constructor(private readonly server: Server) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(): Promise<TestBot> {
    let bot!: TestBot;
    const server = createServer((req, res) => {
      void bot.handle(req, res);
    });
    bot = new TestBot(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return bot;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // Recorded as text; tests assert on it.
    }
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: req.headers.authorization,
      contentType: req.headers['content-type'],
      traceparent: typeof req.headers.traceparent === 'string' ? req.headers.traceparent : undefined,
      body,
    };
    this.requests.push(recorded);
    try {
      await this.handler(recorded, res);
    } catch {
      res.destroy();
    }
  }
}

/** Writes an OpenAI Chat Completions stream: one `chat.completion.chunk` SSE event per delta, then `[DONE]`. */
export async function writeChatCompletionStream(
  res: ServerResponse,
  model: string,
  deltas: string[],
  gapMs = 0,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-test',
      object: 'chat.completion.chunk',
      created: 1_767_225_600,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    })}\n\n`;
  res.write(chunk({ role: 'assistant', content: '' }, null));
  for (const delta of deltas) {
    if (gapMs > 0) await sleep(gapMs);
    res.write(chunk({ content: delta }, null));
  }
  res.write(chunk({}, 'stop'));
  res.end('data: [DONE]\n\n');
}

/**
 * Writes an OpenAI Chat Completions stream that calls tools, as the API streams them: each call's `id` and name in
 * its first `delta.tool_calls[]` entry, its JSON arguments split over several deltas (by `index`), then
 * `finish_reason: "tool_calls"` and `[DONE]`.
 */
export function writeToolCallStream(
  res: ServerResponse,
  model: string,
  calls: Array<{ id: string; name: string; arguments: string }>,
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-tools',
      object: 'chat.completion.chunk',
      created: 1_767_225_600,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    })}\n\n`;
  res.write(chunk({ role: 'assistant', content: null }, null));
  calls.forEach((call, index) => {
    res.write(
      chunk(
        {
          tool_calls: [
            { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
          ],
        },
        null,
      ),
    );
    const third = Math.ceil(call.arguments.length / 3) || 1;
    for (let at = 0; at < call.arguments.length; at += third)
      res.write(
        chunk(
          { tool_calls: [{ index, function: { arguments: call.arguments.slice(at, at + third) } }] },
          null,
        ),
      );
  });
  res.write(chunk({}, 'tool_calls'));
  res.end('data: [DONE]\n\n');
}
