// scripts/test-runner.test.ts: a file whose process dies in the middle of a test (no failing test is reported).
import { it } from 'node:test';

it('passes first', () => {});
it('kills its own process', () => {
  process.kill(process.pid, 'SIGKILL');
});
