import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type HttpResult, http } from '@parley/testing/http-client';
import { createTestClient } from '@parley/testing/oauth/oauth-fixtures';
import type { PortalTestClient } from '@parley/testing/portal/portal-fixtures';
import { startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { createConversation, fetchPlatformToken, newVisitor } from '@parley/testing/webchat/webchat-fixtures';
import { TOKEN_PATH } from '../oauth/token.routes.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NUL = '\u0000';
const LONE_SURROGATE = '\uD800';
const form = { 'content-type': 'application/x-www-form-urlencoded' };

/** A response read off a raw socket: for requests fetch cannot send (NUL in a header, unknown methods). */
interface RawResult {
  status: number;
  headers: Map<string, string>;
  body: { code: string; request_id: string; errors?: Array<{ field: string; in: string; message: string }> };
}

function rawRequest(server: TestServer, request: string): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(server.baseUrl).port), '127.0.0.1', () =>
      socket.write(request, 'latin1'),
    );
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = new Map(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: body ? JSON.parse(body) : undefined,
      });
    });
  });
}

/** A problem+json answer whose `request_id` is the response's X-Request-Id. */
function assertProblem(res: HttpResult, status: number, code: string): void {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(res.body.code, code, res.text);
  assert.equal(res.body.status, status);
  assert.match(res.headers.get('x-request-id') ?? '', UUID);
  assert.equal(res.body.request_id, res.headers.get('x-request-id'));
}

function assertUnsafeRefused(res: HttpResult, part: string, field: string): void {
  assertProblem(res, 400, 'validation_failed');
  assert.deepEqual(
    res.body.errors.map((e: { field: string; in: string }) => [e.in, e.field]),
    [[part, field]],
    res.text,
  );
}

for (const database of TEST_DATABASES) {
  describe(`HTTP edge (${database})`, () => {
    let server: TestServer;
    let acme: PortalTestClient;
    let bearer: Record<string, string>;
    let conversationId: string;
    let sdkHeaders: Record<string, string>;
    before(async () => {
      let acmeId: string;
      ({ server, acme, acmeId } = await startPortalWorld(database));
      const token = await fetchPlatformToken(server, acmeId, [
        'conversations:read',
        'conversations:write',
        'connector:write',
      ]);
      bearer = { authorization: `Bearer ${token}` };
      const v = newVisitor(acmeId);
      sdkHeaders = v.headers;
      conversationId = (await createConversation(server, v)).id;
    });
    after(() => server.close());

    /** Runs `request` and asserts the server logged nothing at error level (no 500, no stack) meanwhile. */
    async function withoutErrorLogs<T>(request: () => Promise<T>): Promise<T> {
      const from = server.logs.length;
      const result = await request();
      const errors = server.logs.slice(from).filter((line) => JSON.parse(line).level >= 50);
      assert.deepEqual(errors, []);
      return result;
    }

    const url = (path: string) => `${server.baseUrl}${path}`;
    const signIn = (body: unknown) => http(url('/portal/api/session'), jsonBody('POST', body));
    const postAgentMessage = (body: unknown) =>
      http(url(`/platform/v1/conversations/${conversationId}/messages`), jsonBody('POST', body, bearer));
    const jsonBody = (method: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

    describe('U+0000 and unpaired surrogates: 400 validation_failed on every route', () => {
      for (const [name, bad] of [
        ['U+0000', `a${NUL}b`],
        ['an unpaired surrogate', `a${LONE_SURROGATE}b`],
      ] as const) {
        it(`refuses ${name} in a JSON body string: sign-in email, agent name, connector name, PUT key`, async () => {
          await withoutErrorLogs(async () => {
            assertUnsafeRefused(
              await signIn({ email: `${bad}@acme.test`, password: 'whatever' }),
              'body',
              'email',
            );
            assertUnsafeRefused(
              await postAgentMessage({
                blocks: [{ type: 'markdown', content: 'hi' }],
                author: { name: bad },
              }),
              'body',
              'author.name',
            );
            assertUnsafeRefused(
              await postAgentMessage({ blocks: [{ type: 'markdown', content: `x${bad}` }] }),
              'body',
              'blocks.0.content',
            );
            assertUnsafeRefused(
              await acme.post('/connectors', { name: bad, type: 'webhook', url: 'http://127.0.0.1:9/x' }),
              'body',
              'name',
            );
            const put = await http(
              url('/integrations/v1/connectors/api-keys/00000000-0000-4000-8000-000000000000'),
              jsonBody('PUT', { api_key: bad }, bearer),
            );
            assertUnsafeRefused(put, 'body', 'api_key');
          });
        });

        it(`refuses ${name} in a nested object key, naming the key without echoing it`, async () => {
          const res = await withoutErrorLogs(() =>
            postAgentMessage({ blocks: [{ type: 'markdown', content: 'hi' }], author: { [bad]: 'x' } }),
          );
          assertUnsafeRefused(res, 'body', 'author.a\uFFFDb');
        });
      }

      it('refuses U+0000 in the query: a before cursor, the platform cursor, the audit filter', async () => {
        await withoutErrorLogs(async () => {
          const messages = await http(url(`/sdk/v1/conversations/${conversationId}/messages?before=%00`), {
            headers: sdkHeaders,
          });
          assertUnsafeRefused(messages, 'querystring', 'before');
          const list = await http(url('/platform/v1/conversations?cursor=a%00b'), { headers: bearer });
          assertUnsafeRefused(list, 'querystring', 'cursor');
          assertUnsafeRefused(await acme.get('/audit?type=connector%00'), 'querystring', 'type');
          assertUnsafeRefused(await acme.get('/audit?subject=%00'), 'querystring', 'subject');
        });
      });

      it('refuses U+0000 in a path parameter: a conversation id, a connector id, an unknown path', async () => {
        await withoutErrorLogs(async () => {
          const read = await http(url('/platform/v1/conversations/a%00b'), { headers: bearer });
          assertUnsafeRefused(read, 'params', 'id');
          const put = await http(
            url('/integrations/v1/connectors/api-keys/%00'),
            jsonBody('PUT', { api_key: 'k' }, bearer),
          );
          assertUnsafeRefused(put, 'params', 'connector_id');
          assertUnsafeRefused(await acme.get('/inbox/conversations/x%00'), 'params', 'id');
          // A path no route takes is refused the same way: the rule holds before routing decides 404 or 405.
          assertUnsafeRefused(await http(url('/no/such%00path')), 'params', '(path)');
        });
      });

      it('refuses a NUL byte in a header value before any route reads it', async () => {
        const res = await rawRequest(
          server,
          `GET /sdk/v1/conversations HTTP/1.1\r\nHost: x\r\nX-Session-Id: ${sdkHeaders['x-session-id']}\r\n` +
            `X-Company: acme${NUL}\r\nX-Request-Id: nul-in-header\r\n\r\n`,
        );
        assert.equal(res.status, 400);
        assert.equal(res.headers.get('content-type'), 'application/problem+json');
        assert.equal(res.headers.get('x-request-id'), 'nul-in-header');
        assert.equal(res.body.code, 'validation_failed');
        assert.equal(res.body.request_id, 'nul-in-header');
        assert.deepEqual(res.body.errors, [
          {
            field: 'x-company',
            in: 'headers',
            message: 'must not contain U+0000 or an unpaired surrogate',
          },
        ]);
      });

      it('answers the token endpoint in its own format: RFC 6749 invalid_request', async () => {
        for (const body of [
          'grant_type=client_credentials&client_id=a%00b',
          `grant_type=client_credentials%00`,
        ]) {
          const res = await withoutErrorLogs(() =>
            http(url(TOKEN_PATH), { method: 'POST', headers: form, body }),
          );
          assert.equal(res.status, 400, res.text);
          assert.equal(res.body.error, 'invalid_request');
          assert.match(res.body.error_description, /NUL/);
          assert.match(res.headers.get('x-request-id') ?? '', UUID);
        }
        const client = await createTestClient(server.ctx, ['connector:read']);
        const query = await http(url(`${TOKEN_PATH}?x=%00`), {
          method: 'POST',
          headers: form,
          body: `grant_type=client_credentials&client_id=${client.clientId}&client_secret=${client.secret}`,
        });
        assert.equal(query.status, 400, query.text);
        assert.equal(query.body.error, 'invalid_request');
      });
    });

    describe('JSON nested deeper than 64 levels: 400 validation_failed on every route, never a 5xx', () => {
      /** `depth` levels of arrays and objects, alternating, as text (the value itself could not be serialised). */
      const nested = (depth: number) =>
        `${'[{"a":'.repeat(Math.floor(depth / 2))}${depth % 2 ? '[' : ''}1${depth % 2 ? ']' : ''}${'}]'.repeat(Math.floor(depth / 2))}`;
      const postRaw = (path: string, body: string, headers: Record<string, string> = {}) =>
        http(url(path), {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
        });
      const tooDeep = (res: HttpResult) => {
        assertProblem(res, 400, 'validation_failed');
        assert.deepEqual(res.body.errors, [
          { field: '(body)', in: 'body', message: 'must not nest arrays and objects deeper than 64 levels' },
        ]);
      };

      it('refuses bodies of 65, 4,000 and 100,000 levels on authenticated, unauthenticated, lenient and unknown routes', async () => {
        await withoutErrorLogs(async () => {
          for (const depth of [65, 4_000, 100_000]) {
            const body = nested(depth);
            tooDeep(await postRaw('/portal/api/session', body));
            tooDeep(await postRaw(`/platform/v1/conversations/${conversationId}/messages`, body, bearer));
            tooDeep(await postRaw('/sdk/v1/conversations', body, sdkHeaders));
            // A scope with its own (lenient) JSON parser, and a path no route takes.
            tooDeep(
              await http(url('/integrations/v1/connectors/api-keys/00000000-0000-4000-8000-000000000000'), {
                method: 'PUT',
                headers: { 'content-type': 'application/json', ...bearer },
                body,
              }),
            );
            tooDeep(await postRaw('/no/such/route', body));
          }
        });
      });

      it('lets 64 levels through to the route, which judges the body as usual', async () => {
        const res = await withoutErrorLogs(() =>
          postRaw('/portal/api/session', `{"email":"a@acme.test","password":"x","extra":${nested(63)}}`),
        );
        assert.notEqual(
          res.body.errors?.[0]?.message,
          'must not nest arrays and objects deeper than 64 levels',
        );
        assert.ok(res.status < 500, res.text);
      });

      it('refuses a header value holding JSON deeper than 64 levels, and passes one of 64', async () => {
        await withoutErrorLogs(async () => {
          const deep = await http(url('/sdk/v1/conversations'), {
            headers: { ...sdkHeaders, 'x-context': nested(65) },
          });
          assertProblem(deep, 400, 'validation_failed');
          assert.deepEqual(deep.body.errors, [
            {
              field: 'x-context',
              in: 'headers',
              message: 'must not nest arrays and objects deeper than 64 levels',
            },
          ]);
          const fine = await http(url('/sdk/v1/conversations'), {
            headers: { ...sdkHeaders, 'x-context': nested(64) },
          });
          assert.equal(fine.status, 200, fine.text);
        });
      });
    });

    describe('framework errors are problems with stable codes', () => {
      it('answers a malformed percent-encoding in the path or the query with 400 malformed_url', async () => {
        for (const path of [
          '/%zz',
          '/platform/v1/conversations/%ED%A0%80',
          '/healthz?q=%zz',
          '/healthz?q=%ED%A0%80',
        ]) {
          const res = await http(url(path));
          assertProblem(res, 400, 'malformed_url');
        }
      });

      it('answers a path parameter over 100 characters with 400 path_parameter_too_long', async () => {
        const long = await http(url(`/platform/v1/conversations/${'a'.repeat(101)}`), { headers: bearer });
        assertProblem(long, 400, 'path_parameter_too_long');
        const longest = await http(url(`/platform/v1/conversations/${'a'.repeat(100)}`), { headers: bearer });
        assertProblem(longest, 404, 'conversation_not_found');
      });

      it('answers a method the path does not have with 405 method_not_allowed and Allow', async () => {
        for (const method of ['DELETE', 'PROPFIND', 'POST']) {
          const res = await http(url('/healthz'), { method });
          assertProblem(res, 405, 'method_not_allowed');
          assert.equal(res.headers.get('allow'), 'GET, HEAD');
        }
        const conversation = await http(url(`/platform/v1/conversations/${conversationId}/messages`), {
          method: 'DELETE',
          headers: bearer,
        });
        assertProblem(conversation, 405, 'method_not_allowed');
        assert.equal(conversation.headers.get('allow'), 'GET, HEAD, POST');
        // A method Node's parser does not know is refused before Fastify: the same answers.
        const brew = await rawRequest(server, 'BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
        assert.equal(brew.status, 405);
        assert.equal(brew.headers.get('allow'), 'GET, HEAD');
        assert.equal(brew.body.code, 'method_not_allowed');
        assert.equal(brew.body.request_id, brew.headers.get('x-request-id'));
        const brewUnknown = await rawRequest(server, 'BREW /no/such/path HTTP/1.1\r\nHost: x\r\n\r\n');
        assert.equal(brewUnknown.status, 404);
        assert.equal(brewUnknown.body.code, 'route_not_found');
      });

      it('keeps unknown paths 404 route_not_found, whatever the method', async () => {
        for (const method of ['GET', 'DELETE', 'PROPFIND', 'OPTIONS']) {
          assertProblem(await http(url('/no/such/path'), { method }), 404, 'route_not_found');
        }
        // /sdk/v1/* has a CORS preflight route, which alone does not make a path exist.
        assertProblem(await http(url('/sdk/v1/no-such-route')), 404, 'route_not_found');
      });

      it('answers OPTIONS on a path without an OPTIONS route with 204 and Allow', async () => {
        const token = await http(url(TOKEN_PATH), { method: 'OPTIONS' });
        assert.equal(token.status, 204);
        assert.equal(token.headers.get('allow'), 'POST');
        assert.match(token.headers.get('x-request-id') ?? '', UUID);
        const health = await http(url('/healthz'), { method: 'OPTIONS' });
        assert.equal(health.status, 204);
        assert.equal(health.headers.get('allow'), 'GET, HEAD');
      });

      it('keeps the token endpoint’s own 405 for the methods Fastify routes', async () => {
        const res = await http(url(TOKEN_PATH), { method: 'PUT' });
        assert.equal(res.status, 405);
        assert.equal(res.headers.get('allow'), 'POST');
        assert.equal(res.body.error, 'invalid_request');
        assert.match(res.headers.get('x-request-id') ?? '', UUID);
      });

      it('reports at most 20 schema errors, however many items a body gets wrong', async () => {
        const body = `{"blocks":[${Array(100_000).fill('{}').join(',')}]}`;
        const res = await withoutErrorLogs(() =>
          http(url(`/platform/v1/conversations/${conversationId}/messages`), {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...bearer },
            body,
          }),
        );
        assertProblem(res, 400, 'validation_failed');
        assert.equal(res.body.errors.length, 20);
        assert.match(res.body.detail, /; and \d+ more\.$/);
        assert.ok(res.text.length < 10_000, `a short answer, not ${res.text.length} bytes`);
      });

      it('answers unparsable bodies, oversized headers and malformed HTTP with problems', async () => {
        assertProblem(
          await http(url('/portal/api/session'), {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"email":',
          }),
          400,
          'invalid_json',
        );
        const huge = await rawRequest(
          server,
          `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        );
        assert.equal(huge.status, 431);
        assert.equal(huge.body.code, 'headers_too_large');
        assert.equal(huge.body.request_id, huge.headers.get('x-request-id'));
        const chunked = await rawRequest(
          server,
          'POST /portal/api/session HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
        );
        assert.equal(chunked.status, 400);
        assert.equal(chunked.body.code, 'malformed_request');
      });
    });

    describe('request ids', () => {
      it('echoes a sane X-Request-Id and replaces an insane one', async () => {
        const sane = 'Req-1.2_3:abc';
        assert.equal(
          (await http(url('/healthz'), { headers: { 'x-request-id': sane } })).headers.get('x-request-id'),
          sane,
        );
        const longest = 'a'.repeat(128);
        assert.equal(
          (await http(url('/healthz'), { headers: { 'x-request-id': longest } })).headers.get('x-request-id'),
          longest,
        );
        for (const insane of ['a'.repeat(129), 'a'.repeat(200), 'has space', 'a/b', '<script>', 'é']) {
          const res = await http(url('/healthz'), { headers: { 'x-request-id': insane } });
          assert.match(res.headers.get('x-request-id') ?? '', UUID, insane);
        }
        // fetch refuses to send a CR inside a header value; a raw socket can.
        const crRes = await rawRequest(
          server,
          'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\rb\r\n\r\n',
        );
        assert.notEqual(crRes.headers.get('x-request-id'), 'a\rb');
        assert.match(crRes.headers.get('x-request-id') ?? '', UUID);
      });

      it('is on every response: 200, 404, 405, problems, OAuth errors, the docs and the portal page', async () => {
        const responses = [
          await http(url('/healthz')),
          await http(url('/no/such/path')),
          await http(url('/healthz'), { method: 'DELETE' }),
          await signIn({ email: 'nobody@acme.test', password: 'wrong password' }),
          await http(url(TOKEN_PATH), { method: 'POST', headers: form, body: 'grant_type=password' }),
          await http(url('/docs/json')),
          await http(url('/portal/sign-in')),
          await http(url(`/platform/v1/conversations/${conversationId}`), { headers: bearer }),
        ];
        assert.deepEqual(
          responses.map((r) => r.status),
          [200, 404, 405, 401, 400, 200, 200, 200],
        );
        for (const res of responses) assert.match(res.headers.get('x-request-id') ?? '', UUID, res.text);
        assert.equal(responses[3]!.body.request_id, responses[3]!.headers.get('x-request-id'));
      });

      it('puts the id in problem bodies and in every log line about the request', async () => {
        const id = `log-${database}-${Date.now()}`;
        const res = await signIn({ email: 'nobody@acme.test', password: 'wrong password', extra: 1 });
        assertProblem(res, 400, 'validation_failed');
        const tagged = await http(url('/portal/api/session'), {
          ...jsonBody('POST', { email: 'nobody@acme.test', password: 'wrong password' }),
          headers: { 'content-type': 'application/json', 'x-request-id': id },
        });
        assert.equal(tagged.status, 401);
        assert.equal(tagged.body.request_id, id);
        const badUrl = await http(url('/%zz'), { headers: { 'x-request-id': `${id}-url` } });
        assert.equal(badUrl.body.request_id, `${id}-url`);
        // Access lines are written once the response is sent, a moment after the client may have it.
        await waitFor('both access lines', () =>
          [id, `${id}-url`].every((rid) =>
            server.logs.some((l) => l.includes(`"request_id":"${rid}"`) && l.includes('"request completed"')),
          ),
        );
        const lines = server.logs.map((l) => JSON.parse(l));
        const completed = (requestId: string) =>
          lines.filter((l) => l.request_id === requestId && l.msg === 'request completed');
        assert.equal(completed(id).length, 1, 'the access-log line carries request_id');
        assert.equal(completed(id)[0].res.statusCode, 401);
        assert.equal(completed(`${id}-url`).length, 1, 'so does the one of a request refused before routing');
        assert.equal(completed(`${id}-url`)[0].res.statusCode, 400);
        assert.ok(!lines.some((l) => 'reqId' in l), 'no line uses Fastify’s default label');
      });
    });
  });
}
