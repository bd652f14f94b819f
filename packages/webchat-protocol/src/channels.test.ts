import assert from 'node:assert/strict';
import { test } from 'node:test';
import { channelOf, MESSAGES_NAMESPACE_NAME, parseChannel, WEBSOCKET_PATH } from './channels.ts';

const companyId = '0a1b2c3d-0000-4000-8000-00000000000a';
const conversationId = 'ffffffff-1111-4111-8111-111111111111';

test('channelOf names the conversation channel in the messages namespace', () => {
  assert.equal(
    channelOf(companyId, conversationId),
    `messages:companies.${companyId}.conversations.${conversationId}`,
  );
  assert.ok(channelOf(companyId, conversationId).startsWith(`${MESSAGES_NAMESPACE_NAME}:`));
});

test('parseChannel reads back what channelOf names', () => {
  assert.deepEqual(parseChannel(channelOf(companyId, conversationId)), { companyId, conversationId });
});

test('parseChannel refuses anything that is not a conversation channel', () => {
  const valid = channelOf(companyId, conversationId);
  for (const channel of [
    '',
    'news:general',
    valid.replace('messages:', 'other:'),
    valid.replace('messages:', ''),
    `${valid}.extra`,
    `x${valid}`,
    // Ids are lowercase UUIDs, as the server generates them.
    channelOf(companyId.toUpperCase(), conversationId),
    `messages:companies.not-a-uuid.conversations.${conversationId}`,
    `messages:companies.${companyId}.conversation.${conversationId}`,
    `messages:companies.${companyId}.conversations.${conversationId}\n`,
  ]) {
    assert.equal(parseChannel(channel), undefined, channel);
  }
});

test('the WebSocket path is the one the realtime engine serves', () => {
  assert.equal(WEBSOCKET_PATH, '/connection/websocket');
});
