import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { accessLineWriter, createLogger } from './logger.ts';

/**
 * The top-level keys of one JSON line in the order written, duplicates kept (JSON.parse would keep only the last of
 * two equal keys, hiding exactly what is checked here).
 */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      let end = i + 1;
      while (line[end] !== '"') end += line[end] === '\\' ? 2 : 1;
      if (depth === 1 && line[end + 1] === ':') keys.push(JSON.parse(line.slice(i, end + 1)));
      i = end;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

const duplicates = (keys: string[]) => keys.filter((k, i) => keys.indexOf(k) !== i);

describe('log lines', () => {
  it('the access-log line of a child logger writes each key once (service, worker), as JSON pino would write', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) }).child({
      worker: 2,
    });
    accessLineWriter(logger)({
      requestId: 'r-1',
      method: 'GET',
      path: '/a"b\\c',
      remoteAddress: undefined,
      statusCode: 200,
      responseTime: 1.5,
    });
    logger.info('plain');
    assert.equal(lines.length, 2);
    assert.deepEqual(topLevelKeys(lines[0]!), [
      'level',
      'time',
      'service',
      'worker',
      'request_id',
      'req',
      'res',
      'responseTime',
      'msg',
    ]);
    const access = JSON.parse(lines[0]!);
    assert.deepEqual(access.req, { method: 'GET', url: '/a"b\\c' });
    assert.equal(access.msg, 'request completed');
    assert.ok(!Number.isNaN(Date.parse(access.time)), lines[0]);
    for (const line of lines) {
      const keys = topLevelKeys(line);
      assert.deepEqual(duplicates(keys), [], line);
      assert.ok(keys.includes('service') && keys.includes('worker'), line);
    }
  });

  describe('of a running server', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer();
    });
    after(() => server.close());

    it('every line, the request log included, has each key once', async () => {
      assert.equal((await fetch(`${server.baseUrl}/healthz`)).status, 200);
      assert.equal((await fetch(`${server.baseUrl}/no-such-route`)).status, 404);
      const requests = server.logs.filter((l) => l.includes('"request completed"'));
      assert.ok(requests.length >= 2, 'the requests were logged');
      for (const line of server.logs) assert.deepEqual(duplicates(topLevelKeys(line)), [], line);
      assert.deepEqual(topLevelKeys(requests[0]!).slice(0, 3), ['level', 'time', 'service']);
    });
  });
});
