import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoryStorage } from './session-storage.ts';
import { TYPING_INTERVAL_MS, TypingThrottle } from './typing-throttle.ts';
import { Webchat } from './webchat.ts';

test('typing is let through at most once every 3 s however often it is asked', () => {
  let clock = 1_000;
  const throttle = new TypingThrottle(TYPING_INTERVAL_MS, () => clock);
  const passed: number[] = [];
  // A keystroke every 100 ms for 10 s.
  for (let i = 0; i < 100; i++, clock += 100) if (throttle.take()) passed.push(clock);
  assert.deepEqual(passed, [1_000, 4_000, 7_000, 10_000]);
  assert.equal(TYPING_INTERVAL_MS, 3000);
});

test('typing() never throws nor queues while not connected', () => {
  const chat = new Webchat({
    baseUrl: 'http://127.0.0.1:9',
    companyId: crypto.randomUUID(),
    storage: memoryStorage(),
  });
  assert.equal(chat.state, 'disconnected');
  assert.doesNotThrow(() => {
    for (let i = 0; i < 5; i++) chat.typing();
  });
  chat.close();
  assert.doesNotThrow(() => chat.typing());
});
