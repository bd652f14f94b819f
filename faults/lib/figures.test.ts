import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MessageSnapshot } from '@parley/webchat-sdk';
import { ClientView } from './client-view.ts';
import { computeFigures, type StoredMessage } from './figures.ts';
import type { SendRecord, VisitorRecord } from './visitor.ts';

const conversationId = 'c1';

function row(
  id: string,
  role: string,
  status: string,
  position: number,
  clientMessageId: string | null = null,
) {
  const message: StoredMessage = {
    id,
    conversationId,
    role,
    status,
    clientMessageId,
    position,
    createdAt: '',
    text: role === 'user' ? `text ${id}` : 'Thanks, noted.',
    errorCodes: [],
  };
  return message;
}

const acked = (clientMessageId: string): SendRecord => ({
  clientMessageId,
  content: clientMessageId,
  sentAt: 0,
  attempts: 1,
  ackedAt: 1,
});

function visitor(sends: SendRecord[], view: VisitorRecord['view'], extra: Partial<VisitorRecord> = {}) {
  const record: VisitorRecord = {
    label: 'v1',
    kind: 'centrifuge',
    conversationId,
    sends,
    view,
    conflictingCompletes: [],
    recoveryFailures: 0,
    ...extra,
  };
  return record;
}

const shown = (id: string, role: string, status: string, clientMessageId: string | null = null) => ({
  id,
  role,
  status,
  clientMessageId,
  text: '',
  errorCodes: [],
});

describe('fault figures', () => {
  it('counts a clean exchange as acknowledged, stored, delivered and answered', () => {
    const stored = [row('u1', 'user', 'complete', 1, 'a'), row('r1', 'digital_employee', 'complete', 2)];
    const figures = computeFigures(stored, [
      visitor(
        [acked('a')],
        [shown('u1', 'user', 'complete', 'a'), shown('r1', 'digital_employee', 'complete')],
      ),
    ]);
    assert.deepEqual(
      [figures.acked, figures.stored, figures.lost, figures.delivered, figures.duplicates, figures.partial],
      [1, 1, 0, 1, 0, 0],
    );
    assert.equal(figures.unanswered, 0);
    assert.equal(figures.extraReplies, 0);
    assert.equal(figures.repliesShown, 1);
  });

  it('an acknowledged message missing from the database is lost; an unreplied one is unanswered', () => {
    const stored = [row('u1', 'user', 'complete', 1, 'a')];
    const figures = computeFigures(stored, [visitor([acked('a'), acked('b')], [])]);
    assert.equal(figures.acked, 2);
    assert.equal(figures.lost, 1);
    assert.equal(figures.delivered, 0);
    assert.equal(figures.unanswered, 1);
  });

  it('counts two rows for one client_message_id, and two different final contents, as duplicates', () => {
    const stored = [
      row('u1', 'user', 'complete', 1, 'a'),
      row('u2', 'user', 'complete', 2, 'a'),
      row('r1', 'digital_employee', 'complete', 3),
    ];
    const figures = computeFigures(stored, [visitor([acked('a')], [], { conflictingCompletes: ['r1'] })]);
    assert.equal(figures.duplicates, 2);
  });

  it('counts partial rows, and complete rows a client still shows partial, as left partial', () => {
    const stored = [
      row('u1', 'user', 'complete', 1, 'a'),
      row('r1', 'digital_employee', 'partial', 2),
      row('u2', 'user', 'complete', 3, 'b'),
      row('r2', 'digital_employee', 'complete', 4),
    ];
    const figures = computeFigures(stored, [
      visitor(
        [acked('a'), acked('b')],
        [shown('r1', 'digital_employee', 'partial'), shown('r2', 'digital_employee', 'partial')],
      ),
    ]);
    assert.equal(figures.partialInDatabase, 1);
    assert.equal(figures.partialOnlyInClient, 1);
    assert.equal(figures.partial, 2);
  });

  it('a send given up on is not acknowledged, and is reported when the database stored it anyway', () => {
    const stored = [row('u1', 'user', 'complete', 1, 'a'), row('r1', 'digital_employee', 'complete', 2)];
    const send: SendRecord = {
      clientMessageId: 'a',
      content: 'x',
      sentAt: 0,
      attempts: 3,
      gaveUp: '103 denied',
    };
    const figures = computeFigures(stored, [visitor([send], [])]);
    assert.deepEqual([figures.acked, figures.lost, figures.gaveUp, figures.gaveUpButStored], [0, 0, 1, 1]);
    assert.deepEqual(figures.gaveUpReasons, { '103 denied': 1 });
  });
});

describe('client view', () => {
  const envelope = (
    sequence: number,
    status: MessageSnapshot['status'],
    content: string,
    operation = 'replace',
  ) => ({
    version: 1,
    operation,
    sequence,
    message_snapshot: {
      id: 'm1',
      conversation_id: conversationId,
      role: 'digital_employee' as const,
      author: null,
      status,
      blocks: [{ id: 'b1', type: 'markdown', content }],
      client_message_id: null,
      created_at: '',
      updated_at: '',
    },
  });

  it('drops envelopes whose sequence is not above the last one seen, and ignores unknown versions', () => {
    const view = new ClientView();
    view.applyEnvelope(envelope(2, 'partial', 'Hel'));
    view.applyEnvelope(envelope(1, 'partial', 'H'));
    view.applyEnvelope({ ...envelope(5, 'partial', 'ignored'), version: 2 });
    assert.equal(view.messages.get('m1')!.text, 'Hel');
    assert.equal(view.dropped, 1);
    view.applyEnvelope(envelope(3, 'complete', 'Hello', 'complete'));
    assert.equal(view.messages.get('m1')!.status, 'complete');
  });

  it('a complete below the last sequence seen is dropped: the client keeps showing partial', () => {
    const view = new ClientView();
    view.applyEnvelope(envelope(7, 'partial', 'Hello wor'));
    view.applyEnvelope(envelope(7, 'complete', 'Hello world', 'complete'));
    assert.equal(view.messages.get('m1')!.status, 'partial');
  });

  it('a complete that does not begin with every text shown before took words back', () => {
    const kept = new ClientView();
    kept.applyEnvelope(envelope(2, 'partial', 'Hel'));
    kept.applyEnvelope(envelope(3, 'partial', 'Hello wo'));
    kept.applyEnvelope(envelope(9, 'complete', 'Hello world', 'complete'));
    assert.equal(kept.messages.get('m1')!.takenBack, false);
    const cut = new ClientView();
    cut.applyEnvelope(envelope(2, 'partial', 'Hel'));
    cut.applyEnvelope(envelope(3, 'partial', 'Hello wo'));
    // A takeover that only knew the text last stored.
    cut.applyEnvelope(envelope(9, 'complete', 'Hello', 'complete'));
    assert.equal(cut.messages.get('m1')!.takenBack, true);
    const stored = [row('m1', 'digital_employee', 'complete', 1)];
    const record = (view: ClientView) => visitor([], [...view.messages.values()]);
    assert.equal(computeFigures(stored, [record(kept)]).takenBack, 0);
    assert.equal(computeFigures(stored, [record(cut), record(cut)]).takenBack, 1, 'counted per message');
  });

  it('notes a message completed twice with different content; a REST snapshot never reopens it', () => {
    const view = new ClientView();
    view.applyEnvelope(envelope(3, 'complete', 'Hello', 'complete'));
    view.applySnapshot(envelope(0, 'partial', 'He').message_snapshot);
    assert.equal(view.messages.get('m1')!.status, 'complete');
    view.applyEnvelope(envelope(4, 'complete', 'Goodbye', 'complete'));
    assert.deepEqual([...view.conflictingCompletes], ['m1']);
  });
});
