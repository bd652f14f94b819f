import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';

/** The request's access-log line (the last line about it), written after `from`. */
const waitForAccessLine = (server: TestServer, from: number) =>
  waitFor('the access-log line', () =>
    server.logs.slice(from).some((l) => /"msg":"request (completed|errored)"/.test(l)),
  );

describe('access log', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('writes one line per request with method, path (no query), status and duration', async () => {
    const from = server.logs.length;
    assert.equal((await fetch(`${server.baseUrl}/healthz?token=should-not-be-logged`)).status, 200);
    // The access line is written once the response is sent, so it may come a moment after the client has it.
    await waitForAccessLine(server, from);
    const lines = server.logs.slice(from).map((l) => JSON.parse(l));
    assert.equal(lines.filter((l) => l.msg === 'incoming request').length, 0);
    const completed = lines.filter((l) => l.msg === 'request completed');
    assert.equal(completed.length, 1, JSON.stringify(lines));
    assert.equal(completed[0].req.method, 'GET');
    assert.equal(completed[0].req.url, '/healthz');
    assert.equal(completed[0].res.statusCode, 200);
    assert.equal(typeof completed[0].responseTime, 'number');
    assert.ok(
      !server.logs.slice(from).join('\n').includes('should-not-be-logged'),
      'query strings are not logged',
    );
  });

  it('writes exactly one line, carrying the response X-Request-Id as request_id, for routed, unmatched and refused requests', async () => {
    for (const [path, status] of [
      ['/healthz', 200],
      ['/no-such-route', 404],
      ['/healthz?x=%zz', 400],
    ] as const) {
      const from = server.logs.length;
      const res = await fetch(`${server.baseUrl}${path}`, { headers: { 'x-request-id': `trace-${status}` } });
      assert.equal(res.status, status);
      assert.equal(res.headers.get('x-request-id'), `trace-${status}`);
      await waitForAccessLine(server, from);
      const lines = server.logs.slice(from).map((l) => JSON.parse(l));
      const access = lines.filter((l) => l.msg === 'request completed' || l.msg === 'request errored');
      assert.equal(access.length, 1, `${path}: ${JSON.stringify(lines)}`);
      assert.equal(access[0].res.statusCode, status);
      // Every line written while the request ran belongs to it.
      for (const line of lines) assert.equal(line.request_id, `trace-${status}`, JSON.stringify(line));
    }
  });
});
