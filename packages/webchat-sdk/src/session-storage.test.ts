import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoryStorage, SessionStore } from './session-storage.ts';

const company = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';

test('the session id is generated once and survives a new SessionStore on the same storage (a reload)', () => {
  const storage = memoryStorage();
  const first = new SessionStore(storage, company, undefined).sessionId();
  assert.match(first, /^[0-9a-f-]{36}$/);
  assert.equal(new SessionStore(storage, company, undefined).sessionId(), first);
  assert.notEqual(new SessionStore(memoryStorage(), company, undefined).sessionId(), first);
});

test('a corrupted stored session id is replaced, not sent', () => {
  const storage = memoryStorage({ [`parley:${company}:session`]: 'not-a-uuid' });
  const id = new SessionStore(storage, company, undefined).sessionId();
  assert.notEqual(id, 'not-a-uuid');
  assert.equal(storage.getItem(`parley:${company}:session`), id);
});

test('the current conversation is remembered per channel', () => {
  const storage = memoryStorage();
  const a = new SessionStore(storage, company, 'chan-a');
  const b = new SessionStore(storage, company, 'chan-b');
  const conversation = crypto.randomUUID();
  a.setCurrentConversationId(conversation);
  assert.equal(new SessionStore(storage, company, 'chan-a').currentConversationId(), conversation);
  assert.equal(b.currentConversationId(), null);
  a.setCurrentConversationId(null);
  assert.equal(a.currentConversationId(), null);
});

test('a storage that throws (blocked localStorage) does not break the session', () => {
  const throwing = {
    getItem: () => {
      throw new Error('SecurityError');
    },
    setItem: () => {
      throw new Error('QuotaExceededError');
    },
    removeItem: () => {
      throw new Error('SecurityError');
    },
  };
  const store = new SessionStore(throwing, company, undefined);
  assert.match(store.sessionId(), /^[0-9a-f-]{36}$/);
  store.setCurrentConversationId(crypto.randomUUID());
  assert.equal(store.currentConversationId(), null);
});
