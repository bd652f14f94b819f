import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ACTION_NOTE_EXCERPT_CHARS,
  type ActionCallNote,
  actionCallNoteText,
  readActionCallNote,
} from './action-call-note.ts';

const call: ActionCallNote = {
  action: 'lookup_order',
  outcome: 'ok',
  status: 200,
  durationMs: 42,
  arguments: '{"order_id":"A-17"}',
  result: '{"order":"A-17","state":"shipped"}',
};

describe('action-call notes', () => {
  it('reads back what it writes: with and without an HTTP status', () => {
    const text = actionCallNoteText(call);
    assert.match(text, /^Action `lookup_order` — HTTP 200, ok in 42 ms/);
    assert.deepEqual(readActionCallNote(text), call);
    const handover = { ...call, action: 'handover', status: null, durationMs: 0, arguments: '' };
    assert.deepEqual(readActionCallNote(actionCallNoteText(handover)), { ...handover, arguments: '{}' });
  });

  it('keeps backticks and fences of the model or the service from breaking the note', () => {
    const hostile = { ...call, arguments: '{"q":"`x`"}', result: 'a\n```\nb' };
    const read = readActionCallNote(actionCallNoteText(hostile));
    assert.equal(read?.arguments, `{"q":"'x'"}`);
    assert.equal(read?.result, "a\n'''\nb");
  });

  it('cuts long results to an excerpt that says how long the whole was', () => {
    const long = 'x'.repeat(ACTION_NOTE_EXCERPT_CHARS + 10);
    const read = readActionCallNote(actionCallNoteText({ ...call, result: long }));
    assert.ok(read?.result.endsWith(`… (${long.length} characters)`));
  });

  it('is not fooled by other notes', () => {
    assert.equal(readActionCallNote('Please call the customer back.'), undefined);
    assert.equal(readActionCallNote('**Hand-over summary**\n\nThe visitor asks about returns.'), undefined);
  });
});
