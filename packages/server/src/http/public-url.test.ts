import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitForSettled } from '@parley/testing/wait';
import { newCentrifugeClient, newVisitor, sdkPost } from '@parley/testing/webchat/webchat-fixtures';
import WebSocket from 'ws';

/** A GET with a chosen Host header (fetch always sends the URL's own), as a browser at another name sends it. */
function getWithHost(
  server: TestServer,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.baseUrl}${path}`, { headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('URLs handed to browsers (PARLEY_PUBLIC_URL)', () => {
  describe('not configured (development): they follow the host each request came in on', () => {
    let server: TestServer;
    let port: string;
    before(async () => {
      server = await startTestServer({ defaultPublicUrl: true });
      port = new URL(server.baseUrl).port;
    });
    after(() => server.close());

    it('gives the SDK a realtime URL on the name the page used, 127.0.0.1 or localhost', async () => {
      assert.equal(server.config.publicUrl, `http://localhost:${port}`);
      assert.equal(server.config.publicUrlConfigured, false);
      const company = (await server.ctx.companies.create('Acme')).id;
      const v = newVisitor(company);
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
        const res = await getWithHost(server, '/sdk/v1/config', { ...v.headers, host });
        assert.equal(res.status, 200);
        // The URL fields (the config also carries the company's business hours, webchat/routing/).
        const { business_hours: _, ...urls } = JSON.parse(res.text);
        assert.deepEqual(urls, {
          realtime_url: `ws://${host}`,
          websocket_url: `ws://${host}/connection/websocket`,
          http_stream_url: `http://${host}/connection/http_stream`,
          sse_url: `http://${host}/connection/sse`,
          emulation_url: `http://${host}/emulation`,
        });
      }
      // A Host that is not a plain authority never becomes part of a URL: the public URL is handed out instead.
      const odd = await getWithHost(server, '/sdk/v1/config', { ...v.headers, host: 'evil.example/x?' });
      assert.equal(JSON.parse(odd.text).realtime_url, `ws://localhost:${port}`);
    });

    it("admits the SDK from a page this server served under the request's own name, and no other", async () => {
      const company = (await server.ctx.companies.create('Globex')).id;
      const v = newVisitor(company);
      const host = `127.0.0.1:${port}`;
      const same = await getWithHost(server, '/sdk/v1/conversations', {
        ...v.headers,
        host,
        origin: `http://${host}`,
      });
      assert.equal(same.status, 200, same.text);
      const other = await getWithHost(server, '/sdk/v1/conversations', {
        ...v.headers,
        host,
        origin: 'http://elsewhere.example',
      });
      assert.equal(other.status, 403);
      assert.equal(JSON.parse(other.text).code, 'origin_not_allowed');
    });

    it("admits a WebSocket from a page this server served under the upgrade's own name, and no other", async () => {
      const company = (await server.ctx.companies.create('Globex Realtime')).id;
      const token = (await sdkPost(server, newVisitor(company), '/auth/connect-token')).body.connection_token;
      const outcomeFrom = (origin: string) => {
        class PageSocket extends WebSocket {
          constructor(url: string, protocols?: string | string[]) {
            super(url, protocols, { origin });
          }
        }
        const client = newCentrifugeClient(server, token, PageSocket);
        const outcome = new Promise<string | number>((resolve) => {
          client.on('connected', () => resolve('connected'));
          client.on('disconnected', (ctx) => resolve(ctx.code));
        });
        client.connect();
        return waitForSettled(outcome, 15_000, origin).finally(() => client.disconnect());
      };
      assert.equal(await outcomeFrom(`http://127.0.0.1:${port}`), 'connected');
      assert.equal(await outcomeFrom('http://elsewhere.example'), 4503);
    });

    it('writes the embed snippet of /demo with the name the page was opened under', async () => {
      const page = await getWithHost(server, '/demo', { host: `127.0.0.1:${port}` });
      assert.match(page.text, new RegExp(`&lt;script src="http://127\\.0\\.0\\.1:${port}/widget\\.js"`));
    });
  });

  describe('configured: they are always the configured URL', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({
        config: { publicUrl: 'https://chat.example.com', oauth: { audience: 'https://chat.example.com' } },
      });
    });
    after(() => server.close());

    it('whatever host the request names, and a same-host Origin is not Parley’s own', async () => {
      assert.equal(server.config.publicUrlConfigured, true);
      const company = (await server.ctx.companies.create('Acme')).id;
      const v = newVisitor(company);
      const host = new URL(server.baseUrl).host;
      const config = await getWithHost(server, '/sdk/v1/config', { ...v.headers, host });
      assert.equal(JSON.parse(config.text).websocket_url, 'wss://chat.example.com/connection/websocket');
      const sameHost = await getWithHost(server, '/sdk/v1/conversations', {
        ...v.headers,
        host,
        origin: `http://${host}`,
      });
      assert.equal(sameHost.status, 403);
      const own = await getWithHost(server, '/sdk/v1/conversations', {
        ...v.headers,
        host,
        origin: 'https://chat.example.com',
      });
      assert.equal(own.status, 200);
      const demo = await getWithHost(server, '/demo', { host });
      assert.match(demo.text, /&lt;script src="https:\/\/chat\.example\.com\/widget\.js"/);
    });
  });
});
