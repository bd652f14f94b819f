import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findUnsafeText, isUnsafeString } from './unsafe-text.ts';

describe('unsafe text (U+0000 and unpaired surrogates)', () => {
  it('accepts ordinary text, including astral characters written as surrogate pairs', () => {
    for (const text of ['', 'hello', 'Grüße', '😀', 'a\uD83D\uDE00b', '\u0001\u001f', '\uFFFD'])
      assert.equal(isUnsafeString(text), false, JSON.stringify(text));
  });

  it('refuses U+0000 and a high or low surrogate standing alone, wherever it is', () => {
    for (const text of [
      '\u0000',
      'a\u0000',
      '\uD800',
      'a\uD83D',
      '\uDE00a',
      'x\uDE00\uD83D',
      '\uD83D\uD83D\uDE00x\uDE00',
    ])
      assert.equal(isUnsafeString(text), true, JSON.stringify(text));
  });

  it('names the first offending string by its path, at any depth and in keys, without echoing the key', () => {
    assert.equal(findUnsafeText({ a: 'ok', b: [1, null, { c: 'x\u0000' }] }), 'b.2.c');
    assert.equal(findUnsafeText({ author: { 'na\u0000me': 'x' } }), 'author.na\uFFFDme');
    assert.equal(findUnsafeText({ '\uD800': 1 }), '\uFFFD');
    assert.equal(findUnsafeText(['fine', '\uDC00']), '1');
    assert.equal(findUnsafeText('\u0000'), '');
    assert.equal(findUnsafeText({ a: 'fine', n: 1, t: true, z: null, b: Buffer.from([0]) }), undefined);
    assert.equal(findUnsafeText(undefined), undefined);
  });

  it('answers flat objects (headers, a query, a form) as the walk does: the first offender in order, key before value', () => {
    const headers = Object.assign(Object.create(null), {
      host: 'x',
      'user-agent': 'a\u0000',
      accept: '\uD800',
    });
    assert.equal(findUnsafeText(headers), 'user-agent');
    assert.equal(findUnsafeText({ 'k\u0000': 'v\u0000' }), 'k\uFFFD');
    assert.equal(findUnsafeText({ a: 'fine', b: '\uDC00', c: '\u0000' }), 'b');
    assert.equal(findUnsafeText({ a: 'ok', 'set-cookie': ['x=1', 'y=\u0000'] }), 'set-cookie.1');
    assert.equal(findUnsafeText({ a: '😀', b: 'Grüße', n: 3, t: false, z: null, u: undefined }), undefined);
    assert.equal(findUnsafeText(Object.create({ inherited: '\u0000' })), undefined);
  });
});

describe('unsafe text at any depth', () => {
  /** `depth` arrays around `leaf`, built without recursion (as a parser would hand it over). */
  const nest = (depth: number, leaf: unknown): unknown => {
    let value = leaf;
    for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value };
    return value;
  };

  it('walks 50,000 levels without growing the call stack, and still reports the first offender in document order', () => {
    assert.equal(findUnsafeText(nest(50_000, 'fine')), undefined);
    const path = findUnsafeText(nest(50_000, 'x\u0000'));
    assert.ok(path?.endsWith('.0.k.0'), 'the path of the deep string');
    assert.equal(
      findUnsafeText({ first: [{ 'bad\u0000key': 1 }], second: '\u0000' }),
      'first.0.bad\uFFFDkey',
    );
    assert.equal(findUnsafeText({ 'a\u0000': 'x\u0000' }), 'a\uFFFD', 'a key before its own value');
  });
});
