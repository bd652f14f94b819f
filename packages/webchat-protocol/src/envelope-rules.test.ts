import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { acceptsEnvelope, isReceivedSnapshot, readEnvelope } from './envelope-rules.ts';
import { envelopeOf } from './envelopes.ts';
import type { MessageSnapshot } from './messages.ts';

const snapshot: MessageSnapshot = {
  id: 'm1',
  conversation_id: '11111111-1111-4111-8111-111111111111',
  role: 'digital_employee',
  author: { id: 'de-1', name: 'Ava' },
  status: 'partial',
  blocks: [{ id: 't1', type: 'typing', typing: true }],
  client_message_id: null,
  position: 2,
  created_at: '2026-11-21T10:00:00.000Z',
  updated_at: '2026-11-21T10:00:00.000Z',
};

describe('acceptsEnvelope (spec "Events" rules 1 and 2)', () => {
  const at = (sequence: number) => ({ version: 1, operation: 'replace', sequence });

  test('an envelope of a message not seen yet is accepted whatever its sequence', () => {
    assert.equal(acceptsEnvelope(undefined, at(1)), true);
    // In-flight data from another node carries sequence 0 (below every real envelope of that message).
    assert.equal(acceptsEnvelope(undefined, at(0)), true);
  });

  test('a sequence above the last seen is accepted; an equal or lower one is dropped', () => {
    assert.equal(acceptsEnvelope(2, at(3)), true);
    assert.equal(acceptsEnvelope(2, at(7)), true);
    assert.equal(acceptsEnvelope(3, at(3)), false);
    assert.equal(acceptsEnvelope(3, at(2)), false);
    assert.equal(acceptsEnvelope(0, at(0)), false);
  });

  test('an unknown version or operation, or a sequence that is not an integer, is never accepted', () => {
    assert.equal(acceptsEnvelope(undefined, { version: 2, operation: 'replace', sequence: 5 }), false);
    assert.equal(acceptsEnvelope(undefined, { version: 0, operation: 'complete', sequence: 5 }), false);
    assert.equal(acceptsEnvelope(1, { version: 1, operation: 'append', sequence: 5 }), false);
    assert.equal(acceptsEnvelope(1, { version: 1, operation: 'complete', sequence: 2.5 }), false);
    assert.equal(acceptsEnvelope(1, { version: 1, operation: 'complete', sequence: Number.NaN }), false);
  });

  test('a complete envelope above the last seen is accepted', () => {
    assert.equal(acceptsEnvelope(4, envelopeOf({ ...snapshot, status: 'complete' }, 5)), true);
  });
});

describe('readEnvelope', () => {
  test('reads a well-formed envelope as it is', () => {
    const envelope = envelopeOf(snapshot, 1);
    const reading = readEnvelope(JSON.parse(JSON.stringify(envelope)));
    assert.equal(reading.refusal, undefined);
    assert.deepEqual(reading.envelope, envelope);
  });

  test('checks the object, then the version, then the operation, then the rest', () => {
    assert.equal(readEnvelope('not an object').refusal, 'invalid');
    assert.equal(readEnvelope(null).refusal, 'invalid');
    assert.equal(readEnvelope([]).refusal, 'invalid');
    // An unknown version wins over everything else that is wrong with it: it is simply not ours to read.
    assert.equal(readEnvelope({ version: 2 }).refusal, 'unknown-version');
    assert.equal(readEnvelope({ version: '1', operation: 'replace' }).refusal, 'unknown-version');
    assert.equal(
      readEnvelope({ version: 1, operation: 'append', sequence: 'x' }).refusal,
      'unknown-operation',
    );
    assert.equal(
      readEnvelope({ version: 1, operation: 'replace', sequence: 'x', message_snapshot: snapshot }).refusal,
      'invalid',
    );
    assert.equal(
      readEnvelope({ version: 1, operation: 'replace', sequence: 1, message_snapshot: {} }).refusal,
      'invalid',
    );
  });

  test('keeps blocks of unknown types and snapshots without a position', () => {
    const { position: _, ...withoutPosition } = snapshot;
    const data = {
      version: 1,
      operation: 'replace',
      sequence: 3,
      message_snapshot: { ...withoutPosition, blocks: [{ id: 'x1', type: 'carousel', items: [] }] },
    };
    const reading = readEnvelope(data);
    assert.equal(reading.refusal, undefined);
    assert.deepEqual(reading.envelope?.message_snapshot.blocks, [{ id: 'x1', type: 'carousel', items: [] }]);
    assert.equal(reading.envelope?.message_snapshot.position, undefined);
  });
});

describe('isReceivedSnapshot', () => {
  test('wants string ids and timestamps, a known status and blocks that each have a type', () => {
    assert.equal(isReceivedSnapshot(snapshot), true);
    assert.equal(isReceivedSnapshot({ ...snapshot, status: 'streaming' }), false);
    assert.equal(isReceivedSnapshot({ ...snapshot, id: 7 }), false);
    assert.equal(isReceivedSnapshot({ ...snapshot, blocks: 'Hello' }), false);
    assert.equal(isReceivedSnapshot({ ...snapshot, blocks: [{ id: 'b1', content: 'no type' }] }), false);
    assert.equal(isReceivedSnapshot({ ...snapshot, updated_at: undefined }), false);
  });
});
