import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Scope } from '@parley/server/internal/oauth/principal';
import { Webhook } from 'standardwebhooks';
import { type HttpResult, platformCall } from '../http-client.ts';
import { createBearerTenant } from '../oauth/oauth-fixtures.ts';
import type { TestServer } from '../test-server.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.timeOrigin-based ms when the request was complete (for delay measurements). */
  at: number;
}

/**
 * A real HTTP server on 127.0.0.1 receiving webhook deliveries: it records each one and answers with what
 * `answer` returns (200 unless told otherwise; 0 = never answer, as a receiver that hangs).
 */
export interface WebhookSink {
  url: string;
  received: Received[];
  answer: (received: Received, index: number) => number;
  /** The received bodies parsed, of one event type. */
  events(
    type?: string,
  ): Array<{ id: string; type: string; company_id: string; data: Record<string, unknown> } & Received>;
  close(): Promise<void>;
}

export async function startWebhookSink(): Promise<WebhookSink> {
  const sink = {
    received: [] as Received[],
    answer: (() => 200) as WebhookSink['answer'],
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const received: Received = {
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
      at: performance.timeOrigin + performance.now(),
    };
    const index = sink.received.push(received) - 1;
    const status = sink.answer(received, index);
    if (status !== 0) res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(sink, {
    url: `http://127.0.0.1:${port}/hooks`,
    events(type?: string) {
      return sink.received
        .map((r) => ({ ...r, ...JSON.parse(r.body) }))
        .filter((e) => type === undefined || e.type === type);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as WebhookSink;
}

/**
 * Verifies a delivery with the `standardwebhooks` package (the scheme's reference implementation, independent of
 * ours): throws unless one of the `webhook-signature` entries was made with `secret` and the timestamp is fresh.
 */
export function verifyDelivery(secret: string, received: Received): unknown {
  return new Webhook(secret).verify(received.body, {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  });
}

/** A company with an API client holding `scopes` and a token from the real token endpoint. */
export async function webhookTenant(
  server: TestServer,
  scopes: Scope[] = ['webhooks:read', 'webhooks:write'],
) {
  return createBearerTenant(server, scopes);
}

export function api(
  server: TestServer,
  auth: Record<string, string>,
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpResult> {
  return platformCall(server.baseUrl, auth, method, `/webhooks${path}`, body);
}
