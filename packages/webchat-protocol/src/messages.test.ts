import assert from 'node:assert/strict';
import { test } from 'node:test';
import { textOf } from './messages.ts';

test('textOf joins the markdown blocks with blank lines and skips every other block', () => {
  assert.equal(
    textOf({
      blocks: [
        { id: 't1', type: 'typing', typing: false },
        { id: 'b1', type: 'markdown', content: 'Hello' },
        { id: 'e1', type: 'error', code: 'responder_failed', message: 'Sorry.' },
        { id: 'x1', type: 'carousel', items: [] },
        { id: 'b2', type: 'markdown', content: '**world**' },
      ],
    }),
    'Hello\n\n**world**',
  );
});

test('textOf of a message without markdown is empty; a markdown block without content adds nothing', () => {
  assert.equal(textOf({ blocks: [] }), '');
  assert.equal(textOf({ blocks: [{ id: 't1', type: 'typing', typing: true }] }), '');
  assert.equal(textOf({ blocks: [{ id: 'b1', type: 'markdown' }] }), '');
});
