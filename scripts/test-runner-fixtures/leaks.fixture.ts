// scripts/test-runner.test.ts: a test that fails and leaves its server listening (closed only on success), the
// pattern that once held a whole run.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { it } from 'node:test';

it('fails with its server still open', async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  assert.equal(1, 2, 'a failing assertion before the close');
  server.close();
});
