import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WebchatError } from './errors.ts';
import { memoryStorage } from './session-storage.ts';
import { createWebchat, Webchat } from './webchat.ts';

// Port 9 (discard) on loopback: nothing listens, so connections are refused at once.
const unreachable = 'http://127.0.0.1:9';
const companyId = '22222222-2222-4222-8222-222222222222';

test('options are checked and methods that need a conversation refuse before start()', async () => {
  assert.throws(
    () => new Webchat({ baseUrl: '', companyId }),
    (err: WebchatError) => err.code === 'invalid_options',
  );
  const chat = new Webchat({ baseUrl: unreachable, companyId, storage: memoryStorage() });
  await assert.rejects(chat.send('hello'), (err: WebchatError) => err.code === 'not_started');
  await assert.rejects(chat.retry('nothing'), (err: WebchatError) => err.code === 'not_started');
  assert.deepEqual(chat.messages, []);
  assert.equal(chat.state, 'disconnected');
  chat.close();
  await assert.rejects(chat.start(), (err: WebchatError) => err.code === 'closed');
});

test('an unreachable server makes createWebchat reject with a typed network error', async () => {
  await assert.rejects(
    createWebchat({ baseUrl: unreachable, companyId, storage: memoryStorage() }),
    (err: unknown) =>
      err instanceof WebchatError &&
      err.code === 'network_error' &&
      err.message.includes('/sdk/v1/conversations'),
  );
});

test('the session id persists in the given storage across instances', () => {
  const storage = memoryStorage();
  const a = new Webchat({ baseUrl: unreachable, companyId, storage });
  const b = new Webchat({ baseUrl: unreachable, companyId, storage });
  assert.equal(a.sessionId, b.sessionId);
  assert.equal(storage.getItem(`parley:${companyId}:session`), a.sessionId);
});
