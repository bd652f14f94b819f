import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ENVELOPE_VERSION, envelopeOf, type InFlightMessages, inFlightEnvelopes } from './envelopes.ts';
import type { MessageSnapshot } from './messages.ts';

const snapshot = (status: MessageSnapshot['status']): MessageSnapshot => ({
  id: 'm1',
  conversation_id: '11111111-1111-4111-8111-111111111111',
  role: 'digital_employee',
  author: { id: 'de-1', name: 'Ava' },
  status,
  blocks: [{ id: 'b1', type: 'markdown', content: 'Hel' }],
  client_message_id: null,
  position: 1,
  created_at: '2026-11-21T10:00:00.000Z',
  updated_at: '2026-11-21T10:00:00.000Z',
});

test('envelopeOf: a partial snapshot is a replace, a complete one a complete, with the given sequence', () => {
  const partial = snapshot('partial');
  assert.deepEqual(envelopeOf(partial, 2), {
    version: ENVELOPE_VERSION,
    operation: 'replace',
    sequence: 2,
    message_snapshot: partial,
  });
  const complete = snapshot('complete');
  assert.deepEqual(envelopeOf(complete, 7), {
    version: 1,
    operation: 'complete',
    sequence: 7,
    message_snapshot: complete,
  });
});

test('inFlightEnvelopes: the in_flight list of a subscribe result, else nothing', () => {
  const data: InFlightMessages = { in_flight: [envelopeOf(snapshot('partial'), 3)] };
  assert.deepEqual(inFlightEnvelopes(data), data.in_flight);
  assert.deepEqual(inFlightEnvelopes({ in_flight: [] }), []);
  assert.deepEqual(inFlightEnvelopes(undefined), []);
  assert.deepEqual(inFlightEnvelopes(null), []);
  assert.deepEqual(inFlightEnvelopes('in_flight'), []);
  assert.deepEqual(inFlightEnvelopes({ in_flight: 'not a list' }), []);
  assert.deepEqual(inFlightEnvelopes({ other: [1] }), []);
});
