import assert from 'node:assert/strict';
import { test } from 'node:test';
import { choicesOf, INTERACTIVE_LIMITS, readInteractiveBlocks } from './interactive-blocks.ts';
import { textOf } from './messages.ts';

const quick = (options: unknown[]) => ({ type: 'quick_replies', options });
const card = (extra: Record<string, unknown> = {}) => ({
  type: 'card',
  title: 'Shoes',
  buttons: [],
  ...extra,
});

test('readInteractiveBlocks keeps valid quick replies and cards as written', () => {
  const blocks = [
    quick([{ id: 'a', label: 'A' }]),
    card({
      text: 'Nice',
      image_url: 'https://x.example/i.png',
      buttons: [{ id: 'go', label: 'Go', url: 'http://x.example' }],
    }),
  ];
  assert.deepEqual(readInteractiveBlocks(blocks, 'blocks'), { blocks });
});

test('readInteractiveBlocks names the first broken rule', () => {
  const long = 'x'.repeat(INTERACTIVE_LIMITS.labelLength + 1);
  const cases: Array<[unknown, string]> = [
    ['nope', 'blocks'],
    [[{ type: 'carousel' }], 'blocks[0].type'],
    [[quick([])], 'blocks[0].options'],
    [[quick(Array.from({ length: 11 }, (_, i) => ({ id: `o${i}`, label: 'L' })))], 'blocks[0].options'],
    [[quick([{ id: '', label: 'A' }])], 'blocks[0].options[0].id'],
    [[quick([{ id: 'a', label: '  ' }])], 'blocks[0].options[0].label'],
    [[quick([{ id: 'a', label: long }])], 'blocks[0].options[0].label'],
    [[quick([{ id: 'a', label: 'A', url: 'https://x.example' }])], 'blocks[0].options[0].url'],
    [[card({ title: '' })], 'blocks[0].title'],
    [[card({ image_url: 'javascript:alert(1)' })], 'blocks[0].image_url'],
    [[card({ image_url: 'data:image/png;base64,AAAA' })], 'blocks[0].image_url'],
    [[card({ buttons: [{ id: 'b', label: 'B', url: '/relative' }] })], 'blocks[0].buttons[0].url'],
    [[card({ extra: 1 })], 'blocks[0].extra'],
    [[quick([{ id: 'a', label: 'A' }]), card({ buttons: [{ id: 'a', label: 'Again' }] })], 'blocks[1]'],
    [Array.from({ length: 6 }, () => card()), 'blocks'],
  ];
  for (const [value, field] of cases) {
    const { problem } = readInteractiveBlocks(value, 'blocks');
    assert.equal(problem?.field, field, JSON.stringify(value));
  }
});

test('choicesOf offers quick reply options and url-less card buttons only', () => {
  const blocks = [
    { id: 'm', type: 'markdown', content: 'Hi' },
    { id: 'q', ...quick([{ id: 'a', label: 'A' }]) },
    {
      id: 'c',
      ...card({
        buttons: [
          { id: 'b', label: 'B' },
          { id: 'l', label: 'Link', url: 'https://x.example' },
        ],
      }),
    },
  ];
  assert.deepEqual(choicesOf(blocks), [
    { id: 'a', label: 'A' },
    { id: 'b', label: 'B' },
  ]);
});

test('textOf reads a postback as its label', () => {
  assert.equal(
    textOf({ blocks: [{ id: 'p', type: 'postback', option_id: 'a', label: 'Track my order' }] }),
    'Track my order',
  );
});
