import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Transcript } from './transcript.ts';
import type { Block, MessageEnvelope, MessageSnapshot } from './wire.ts';

const conversationId = '11111111-1111-4111-8111-111111111111';

function snapshot(id: string, overrides: Partial<MessageSnapshot> = {}): MessageSnapshot {
  return {
    id,
    conversation_id: conversationId,
    role: 'digital_employee',
    author: { id: 'de-1', name: 'Ava' },
    status: 'partial',
    blocks: [],
    client_message_id: null,
    created_at: '2026-11-21T10:00:00.000Z',
    updated_at: '2026-11-21T10:00:00.000Z',
    ...overrides,
  };
}

function envelope(
  sequence: number,
  snap: MessageSnapshot,
  operation = 'replace',
  version = 1,
): MessageEnvelope {
  return { version, operation, sequence, message_snapshot: snap };
}

const md = (content: string): Block => ({ id: 'b1', type: 'markdown', content });
const typing: Block = { id: 't1', type: 'typing', typing: true };

describe('Transcript client rules', () => {
  test('messages created in the same millisecond are shown in the order the server stored them (position)', () => {
    const transcript = new Transcript(conversationId);
    const at = '2026-11-21T10:00:00.000Z';
    // The ids sort the other way round: only `position` knows the order.
    transcript.applySnapshot(
      snapshot('00-reply', { role: 'digital_employee', status: 'complete', position: 3, created_at: at }),
    );
    transcript.applySnapshot(
      snapshot('aa-question', { role: 'user', status: 'complete', position: 2, created_at: at }),
    );
    transcript.applySnapshot(snapshot('ff-greeting', { status: 'complete', position: 1, created_at: at }));
    assert.deepEqual(
      transcript.list().map((m) => m.id),
      ['ff-greeting', 'aa-question', '00-reply'],
    );
  });

  test('an in-flight envelope with sequence 0 (another node streams it) is applied, then any live one wins', () => {
    const transcript = new Transcript(conversationId);
    assert.equal(
      transcript.applyEnvelope(envelope(0, snapshot('m1', { blocks: [md('Hel')] }))).outcome,
      'added',
    );
    assert.equal(
      transcript.applyEnvelope(envelope(0, snapshot('m1', { blocks: [md('H')] }))).outcome,
      'stale',
    );
    assert.equal(
      transcript.applyEnvelope(envelope(5, snapshot('m1', { blocks: [md('Hello')] }))).outcome,
      'updated',
    );
    assert.equal(transcript.get('m1')?.text, 'Hello');
  });

  test('a typing block shows as an indicator, then text replaces it and complete finishes the message', () => {
    const transcript = new Transcript(conversationId);
    const first = transcript.applyEnvelope(envelope(1, snapshot('m1', { blocks: [typing] })));
    assert.equal(first.outcome, 'added');
    assert.equal(first.message?.typing, true);
    assert.deepEqual(
      transcript.typing().map((m) => m.id),
      ['m1'],
    );

    const grown = transcript.applyEnvelope(envelope(2, snapshot('m1', { blocks: [md('Hel')] })));
    assert.equal(grown.outcome, 'updated');
    assert.equal(grown.message?.text, 'Hel');
    assert.equal(grown.message?.typing, false);
    assert.equal(transcript.typing().length, 0);

    const done = transcript.applyEnvelope(
      envelope(3, snapshot('m1', { status: 'complete', blocks: [md('Hello')] }), 'complete'),
    );
    assert.equal(done.outcome, 'completed');
    assert.equal(transcript.get('m1')?.status, 'complete');
    assert.equal(transcript.get('m1')?.text, 'Hello');
  });

  test('out-of-order envelopes (sequence not above the last seen) are dropped', () => {
    const transcript = new Transcript(conversationId);
    transcript.applyEnvelope(envelope(1, snapshot('m1', { blocks: [typing] })));
    transcript.applyEnvelope(envelope(3, snapshot('m1', { blocks: [md('Hello wor')] })));
    assert.equal(
      transcript.applyEnvelope(envelope(2, snapshot('m1', { blocks: [md('Hel')] }))).outcome,
      'stale',
    );
    assert.equal(
      transcript.applyEnvelope(envelope(3, snapshot('m1', { blocks: [md('Hello wor')] }))).outcome,
      'stale',
    );
    assert.equal(transcript.get('m1')?.text, 'Hello wor');
    // Sequences are per message: another message starting at 1 is fine.
    assert.equal(
      transcript.applyEnvelope(envelope(1, snapshot('m2', { blocks: [md('Hi')] }))).outcome,
      'added',
    );
  });

  test('envelopes with an unknown version or operation, or malformed ones, change nothing', () => {
    const transcript = new Transcript(conversationId);
    transcript.applyEnvelope(envelope(1, snapshot('m1', { blocks: [md('v1 text')] })));
    assert.equal(
      transcript.applyEnvelope(envelope(2, snapshot('m1', { blocks: [md('v2 text')] }), 'replace', 2))
        .outcome,
      'unknown-version',
    );
    assert.equal(
      transcript.applyEnvelope(envelope(2, snapshot('m9'), 'replace', 0)).outcome,
      'unknown-version',
    );
    assert.equal(
      transcript.applyEnvelope(envelope(2, snapshot('m1'), 'append')).outcome,
      'unknown-operation',
    );
    assert.equal(
      transcript.applyEnvelope({ version: 1, operation: 'replace', sequence: 'x', message_snapshot: {} })
        .outcome,
      'invalid',
    );
    assert.equal(transcript.applyEnvelope('not an object').outcome, 'invalid');
    assert.equal(
      transcript.applyEnvelope(envelope(1, { ...snapshot('m5'), conversation_id: 'other' })).outcome,
      'other-conversation',
    );
    assert.equal(transcript.size, 1);
    assert.equal(transcript.get('m1')?.text, 'v1 text');
  });

  test('a partial after complete never reopens a finished message', () => {
    const transcript = new Transcript(conversationId);
    transcript.applyEnvelope(
      envelope(1, snapshot('m1', { status: 'complete', blocks: [md('Done')] }), 'complete'),
    );
    assert.equal(
      transcript.applyEnvelope(envelope(5, snapshot('m1', { blocks: [md('Do')] }))).outcome,
      'after-complete',
    );
    assert.equal(transcript.get('m1')?.text, 'Done');
  });

  test('one order for all roles: created_at then id, regardless of arrival order', () => {
    const transcript = new Transcript(conversationId);
    const at = (s: number) => `2026-11-21T10:00:0${s}.000Z`;
    transcript.applyEnvelope(
      envelope(1, snapshot('c-agent', { role: 'agent', created_at: at(3), status: 'complete' }), 'complete'),
    );
    transcript.applyEnvelope(
      envelope(
        1,
        snapshot('a-user', { role: 'user', author: null, created_at: at(1), status: 'complete' }),
        'complete',
      ),
    );
    transcript.applyEnvelope(
      envelope(
        1,
        snapshot('z-system', { role: 'system', author: null, created_at: at(1), status: 'complete' }),
        'complete',
      ),
    );
    transcript.applyEnvelope(envelope(1, snapshot('b-de', { created_at: at(2), blocks: [typing] })));
    assert.deepEqual(
      transcript.list().map((m) => m.id),
      ['a-user', 'z-system', 'b-de', 'c-agent'],
    );
    // A streamed update does not move its message.
    transcript.applyEnvelope(
      envelope(2, snapshot('b-de', { created_at: at(2), updated_at: at(9), blocks: [md('x')] })),
    );
    assert.deepEqual(
      transcript.list().map((m) => m.id),
      ['a-user', 'z-system', 'b-de', 'c-agent'],
    );
  });

  test('a pending send shows at once, after stored messages, and merges with its broadcast by client_message_id', () => {
    const transcript = new Transcript(conversationId);
    transcript.applyEnvelope(
      envelope(1, snapshot('greeting', { status: 'complete', blocks: [md('Hi')] }), 'complete'),
    );
    const pending = transcript.addPending('cm-1', 'Hello');
    assert.equal(pending.status, 'pending');
    assert.deepEqual(
      transcript.unsent().map((m) => m.key),
      ['cm-1'],
    );
    assert.deepEqual(
      transcript.list().map((m) => m.key),
      ['greeting', 'cm-1'],
    );

    transcript.setSendStatus('cm-1', 'sent');
    const echoed = transcript.applyEnvelope(
      envelope(
        1,
        snapshot('srv-1', {
          role: 'user',
          author: null,
          status: 'complete',
          client_message_id: 'cm-1',
          created_at: '2026-11-21T10:00:05.000Z',
          blocks: [md('Hello')],
        }),
        'complete',
      ),
    );
    assert.equal(echoed.message?.key, 'cm-1');
    assert.equal(transcript.size, 2);
    assert.equal(transcript.getById('srv-1')?.status, 'complete');
    // A late send-status change does not downgrade the stored message.
    assert.equal(transcript.setSendStatus('cm-1', 'failed', { code: '1', message: 'timeout' }), undefined);
    assert.equal(transcript.get('cm-1')?.status, 'complete');
    // The same broadcast twice (a retried publish) is still one message.
    transcript.applySnapshot(
      snapshot('srv-1', {
        role: 'user',
        status: 'complete',
        client_message_id: 'cm-1',
        blocks: [md('Hello')],
      }),
    );
    assert.equal(transcript.list().filter((m) => m.clientMessageId === 'cm-1').length, 1);
  });

  test('REST snapshots merge without rolling back newer state or duplicating', () => {
    const transcript = new Transcript(conversationId);
    transcript.applyEnvelope(
      envelope(
        4,
        snapshot('m1', { status: 'complete', updated_at: '2026-11-21T10:00:04.000Z', blocks: [md('Final')] }),
        'complete',
      ),
    );
    assert.equal(
      transcript.applySnapshot(snapshot('m1', { updated_at: '2026-11-21T10:00:02.000Z', blocks: [md('Fi')] }))
        .outcome,
      'after-complete',
    );
    assert.equal(
      transcript.applySnapshot(
        snapshot('m2', { status: 'partial', updated_at: '2026-11-21T10:00:05.000Z', blocks: [md('Str')] }),
      ).outcome,
      'added',
    );
    // A replayed envelope older than the REST snapshot is not applied (REST carries no sequence).
    assert.equal(
      transcript.applyEnvelope(
        envelope(1, snapshot('m2', { updated_at: '2026-11-21T10:00:01.000Z', blocks: [typing] })),
      ).outcome,
      'stale',
    );
    assert.equal(
      transcript.applyEnvelope(
        envelope(2, snapshot('m2', { updated_at: '2026-11-21T10:00:06.000Z', blocks: [md('Stream')] })),
      ).outcome,
      'updated',
    );
    assert.equal(transcript.get('m2')?.text, 'Stream');
    assert.equal(transcript.size, 2);
  });

  test('an error block surfaces on the message', () => {
    const transcript = new Transcript(conversationId);
    const result = transcript.applyEnvelope(
      envelope(
        2,
        snapshot('m1', {
          status: 'complete',
          blocks: [
            md('Partial'),
            { id: 'e', type: 'error', code: 'responder_failed', message: 'The assistant is unavailable.' },
          ],
        }),
        'complete',
      ),
    );
    assert.deepEqual(result.message?.error, {
      code: 'responder_failed',
      message: 'The assistant is unavailable.',
    });
  });
});

describe('Transcript interactive blocks', () => {
  const quick: Block = { id: 'q1', type: 'quick_replies', options: [{ id: 'yes', label: 'Yes' }] };

  test('the open offer is the latest complete bot or agent message with choices, until the visitor answers', () => {
    const transcript = new Transcript(conversationId);
    transcript.applySnapshot(
      snapshot('m1', { status: 'complete', position: 1, blocks: [md('Sure?'), quick] }),
    );
    assert.equal(transcript.openOffer()?.id, 'm1');
    transcript.applySnapshot(
      snapshot('m2', { role: 'system', status: 'complete', position: 2, blocks: [md('note')] }),
    );
    assert.equal(transcript.openOffer()?.id, 'm1', 'a system notice does not replace the offer');
    const pending = transcript.addPending('c1', 'Yes', [], undefined, { id: 'yes', label: 'Yes' });
    assert.deepEqual(pending.blocks, [{ id: 'local', type: 'postback', option_id: 'yes', label: 'Yes' }]);
    assert.equal(pending.text, 'Yes');
    assert.equal(transcript.openOffer(), undefined, 'answered once a visitor message follows');
  });

  test('a message without choices, or still streaming, offers nothing', () => {
    const transcript = new Transcript(conversationId);
    transcript.applySnapshot(
      snapshot('m1', { status: 'complete', position: 1, blocks: [md('Sure?'), quick] }),
    );
    transcript.applySnapshot(snapshot('m2', { status: 'partial', position: 2, blocks: [md('thinking')] }));
    assert.equal(transcript.openOffer(), undefined);
    const link: Block = {
      id: 'c1',
      type: 'card',
      title: 'Docs',
      buttons: [{ id: 'open', label: 'Open', url: 'https://docs.example' }],
    };
    transcript.applySnapshot(
      snapshot('m2', {
        status: 'complete',
        position: 2,
        blocks: [link],
        updated_at: '2026-11-21T10:00:01.000Z',
      }),
    );
    assert.equal(transcript.openOffer(), undefined, 'a link button is no choice');
  });
});
