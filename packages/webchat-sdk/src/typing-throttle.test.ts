import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoryStorage } from './session-storage.ts';
import { TypingThrottle } from './typing-throttle.ts';
import { Webchat } from './webchat.ts';

// What chat.typing() publishes on the wire (once per 3 s, nothing while offline, nothing queued) is shown in
// webchat.integration.test.ts "typing"; here the throttle's own timing, on an injected clock.
test('typing is let through at most once every 3 s however often it is asked', () => {
  let clock = 1_000;
  // The default interval, as the SDK builds it.
  const throttle = new TypingThrottle(undefined, () => clock);
  const passed: number[] = [];
  // A keystroke every 100 ms for 10 s.
  for (let i = 0; i < 100; i++, clock += 100) if (throttle.take()) passed.push(clock);
  assert.deepEqual(passed, [1_000, 4_000, 7_000, 10_000]);
});

test('a pause longer than the interval lets the next keystroke through at once', () => {
  let clock = 0;
  const throttle = new TypingThrottle(3_000, () => clock);
  assert.equal(throttle.take(), true);
  clock = 2_999;
  assert.equal(throttle.take(), false, 'within the interval');
  clock = 3_000;
  assert.equal(throttle.take(), true, 'a full interval after the last one that went out');
  clock = 60_000;
  assert.equal(throttle.take(), true);
  assert.equal(throttle.take(), false);
});

test('typing() on a chat that was never started, or is closed, does not throw', () => {
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
