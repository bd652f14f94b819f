// scripts/test-runner.test.ts: a file whose second test never ends and keeps the process alive.
import { describe, it } from 'node:test';

describe('a hanging file', () => {
  it('passes first', () => {});
  it('waits forever', async () => {
    setInterval(() => {}, 1_000);
    await new Promise(() => {});
  });
});
