import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TimerWheel, type WheelTask } from './timer-wheel.ts';

/** The shared timer wheel: tasks fire once at or after their time; rescheduling earlier wins. */

function task(log: number[], id: number): WheelTask {
  return { wheelSlot: 0, onTimer: () => log.push(id) };
}

test('tasks fire in slot order, not before their time, and only once', () => {
  const wheel = new TimerWheel(10);
  const log: number[] = [];
  const start = Math.ceil(Date.now() / 10) * 10 + 10_000;
  wheel.tick(start);
  const a = task(log, 1);
  const b = task(log, 2);
  wheel.schedule(b, start + 50);
  wheel.schedule(a, start + 20);
  wheel.tick(start + 15);
  assert.deepEqual(log, []);
  wheel.tick(start + 20);
  assert.deepEqual(log, [1]);
  wheel.tick(start + 100);
  wheel.tick(start + 200);
  assert.deepEqual(log, [1, 2]);
});

test('an earlier reschedule replaces a later one; a later one keeps the earlier; cancel drops it', () => {
  const wheel = new TimerWheel(10);
  const log: number[] = [];
  const start = Math.ceil(Date.now() / 10) * 10 + 10_000;
  wheel.tick(start);
  const a = task(log, 1);
  wheel.schedule(a, start + 100);
  wheel.schedule(a, start + 30);
  wheel.tick(start + 40);
  assert.deepEqual(log, [1]);
  wheel.tick(start + 150);
  assert.deepEqual(log, [1], 'the stale later entry is skipped');
  const b = task(log, 2);
  wheel.schedule(b, start + 200);
  wheel.schedule(b, start + 400);
  wheel.tick(start + 210);
  assert.deepEqual(log, [1, 2]);
  const c = task(log, 3);
  wheel.schedule(c, start + 300);
  wheel.cancel(c);
  wheel.tick(start + 500);
  assert.deepEqual(log, [1, 2]);
});
