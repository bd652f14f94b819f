import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  hideUnclosedMarkers,
  type Inline,
  markdownPlainText,
  parseInline,
  parseMarkdown,
  safeHref,
} from './markdown.ts';
import { MAX_NESTING } from './markdown-inline.ts';
import { PATHOLOGICAL_INPUTS, parseInWorker } from './testing/pathological-inputs.ts';
import { parseMarkdown as referenceParseMarkdown } from './testing/reference-parser.ts';

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

test('the linear parser gives the reference parser’s tree for every generated input', () => {
  // Short strings drawn from the syntax's pieces (the reference is quadratic, so they stay short), with a fixed seed.
  const pieces =
    '* ** _ __ ` [ ] ( ) \t \n a x_y a_ _a *a a* ! h http://x.y https://a.b/c. . : < # - 1. ``` é javascript:a ' +
    '(https://q.r) ](https://z.w) [a](https://u.v)';
  // Block markers need the space after them.
  const parts = [' ', ...pieces.split(' ').map((p) => (/^(#|-|1\.)$/.test(p) ? `${p} ` : p))];
  let seed = 20;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let round = 0; round < 20_000; round++) {
    let source = '';
    for (let length = 1 + next(30); length > 0; length--) source += parts[next(parts.length)];
    assert.deepEqual(parseMarkdown(source), referenceParseMarkdown(source), JSON.stringify(source));
  }
});

test('nesting deeper than MAX_NESTING stays literal text', () => {
  const depth = (nodes: Inline[]): number =>
    Math.max(0, ...nodes.map((n) => ('children' in n ? 1 + depth(n.children) : 0)));
  // Each `__` pair closes at the end of the text inside the one around it: 4,000 levels if nothing stopped it.
  const deep = `${'__'.repeat(4000)}x${'__'.repeat(4000)}`;
  const nodes = parseInline(deep);
  assert.equal(depth(nodes), MAX_NESTING);
  assert.equal(markdownPlainText(deep).length, deep.length - 4 * MAX_NESTING);
});

test('plain text keeps what the reader sees: markers of headings, emphasis and links go, other characters stay', () => {
  assert.equal(
    markdownPlainText(
      '# Order #42\n\nUse `snake_case`, **C#** and [docs](https://x.test) — 2 > 1\n- a\n- b_c',
    ),
    'Order #42 Use snake_case, C# and docs — 2 > 1 a b_c',
  );
});

test('pathological inputs of 256 KB parse in linear time (a worker with a generous bound)', async () => {
  // Each input makes a scan-ahead parser (src/testing/reference-parser.ts) do quadratic work: at 256 KB that is
  // minutes, while a linear one needs well under a second each. The bound only catches the catastrophic case; the
  // figures are in bench/widget/markdown.bench.ts.
  const { done, pending } = await parseInWorker(256 * 1024, 60_000);
  assert.deepEqual(pending, [], `still parsing after 60 s: ${pending.join(', ')}`);
  assert.equal(done.length, Object.keys(PATHOLOGICAL_INPUTS).length);
});
