// scripts/test-runner.test.ts: a file with one passing and one failing test, which ends normally.
import assert from 'node:assert/strict';
import { it } from 'node:test';

it('passes', () => {});
it('fails', () => assert.equal(1, 2));
