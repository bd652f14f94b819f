import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hideUnclosedMarkers, parseInline, parseMarkdown, safeHref } from './markdown.ts';

test('inline syntax: bold, italic, code and safe links', () => {
  assert.deepEqual(parseInline('a **b** *c* `d` [e](https://x.test/p)'), [
    { type: 'text', text: 'a ' },
    { type: 'strong', children: [{ type: 'text', text: 'b' }] },
    { type: 'text', text: ' ' },
    { type: 'em', children: [{ type: 'text', text: 'c' }] },
    { type: 'text', text: ' ' },
    { type: 'code', text: 'd' },
    { type: 'text', text: ' ' },
    { type: 'link', href: 'https://x.test/p', children: [{ type: 'text', text: 'e' }] },
  ]);
});

test('HTML in a message stays literal text', () => {
  const xss = '<img src=x onerror="window.__xss=1">';
  assert.deepEqual(parseMarkdown(xss), [{ type: 'paragraph', children: [{ type: 'text', text: xss }] }]);
});

test('javascript: and data: links are not links', () => {
  assert.equal(safeHref('javascript:alert(1)'), null);
  assert.equal(safeHref('data:text/html,<b>x</b>'), null);
  assert.equal(safeHref('mailto:a@b.test'), 'mailto:a@b.test');
  assert.deepEqual(
    parseInline('[x](javascript:alert(1))').filter((n) => n.type === 'link'),
    [],
  );
});

test('half-streamed syntax stays literal until it closes', () => {
  assert.deepEqual(parseInline('**bol'), [{ type: 'text', text: '**bol' }]);
  assert.deepEqual(parseMarkdown('```\nconst a = 1'), [{ type: 'code', text: 'const a = 1' }]);
});

test('blocks: paragraphs, lists, headings and line breaks', () => {
  const blocks = parseMarkdown('# Title\n\nline one\nline two\n\n- a\n- b\n1. c\n');
  assert.deepEqual(
    blocks.map((b) => b.type),
    ['heading', 'paragraph', 'list', 'list'],
  );
  const para = blocks[1]!;
  assert.ok(para.type === 'paragraph' && para.children.some((c) => c.type === 'br'));
  const list = blocks[2]!;
  assert.ok(list.type === 'list' && !list.ordered && list.items.length === 2);
  assert.ok(blocks[3]!.type === 'list' && (blocks[3] as { ordered: boolean }).ordered);
});

test('snake_case words are not italicised', () => {
  assert.deepEqual(parseInline('client_message_id'), [{ type: 'text', text: 'client_message_id' }]);
});

test('underscores inside identifiers are not emphasis', () => {
  assert.deepEqual(parseInline('a window.__xss=1 and b.__y'), [
    { type: 'text', text: 'a window.__xss=1 and b.__y' },
  ]);
  assert.deepEqual(parseInline('__bold__ _em_'), [
    { type: 'strong', children: [{ type: 'text', text: 'bold' }] },
    { type: 'text', text: ' ' },
    { type: 'em', children: [{ type: 'text', text: 'em' }] },
  ]);
});

test('a streaming text hides its last unmatched bold or code marker', () => {
  assert.equal(hideUnclosedMarkers('with a **digital'), 'with a digital');
  assert.equal(hideUnclosedMarkers('with a **digital** emp'), 'with a **digital** emp');
  assert.equal(hideUnclosedMarkers('run `npm'), 'run npm');
  assert.equal(hideUnclosedMarkers('```\ncode `x'), '```\ncode `x');
});
