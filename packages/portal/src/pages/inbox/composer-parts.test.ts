import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type DraftStorage, Drafts } from './drafts.ts';
import {
  type Colleague,
  handleOf,
  insertMention,
  matchColleagues,
  mentionAt,
  mentionedIds,
} from './mentions.ts';
import { neighbour, shortcutFor } from './shortcuts.ts';

class MemoryStorage implements DraftStorage {
  readonly map = new Map<string, string>();
  getItem(k: string) {
    return this.map.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.map.set(k, v);
  }
  removeItem(k: string) {
    this.map.delete(k);
  }
}

const kim: Colleague = { id: 'u1', name: 'Kim Lee', email: 'kim@acme.test' };
const ann: Colleague = { id: 'u2', name: null, email: 'ann@acme.test' };

describe('composer drafts', () => {
  it('keeps a draft per conversation and per user, and forgets an empty one', () => {
    const storage = new MemoryStorage();
    const mine = new Drafts(storage, 'me');
    const theirs = new Drafts(storage, 'other');
    mine.set('c1', { text: 'Hello', mode: 'reply' });
    mine.set('c2', { text: 'psst', mode: 'note' });
    assert.deepEqual(mine.get('c1'), { text: 'Hello', mode: 'reply' });
    assert.deepEqual(mine.get('c2'), { text: 'psst', mode: 'note' });
    assert.equal(theirs.get('c1'), undefined);
    mine.set('c1', { text: '  ', mode: 'reply' });
    assert.equal(mine.get('c1'), undefined);
    mine.clear('c2');
    assert.equal(storage.map.size, 0);
  });

  it('survives broken storage and bad stored data', () => {
    const broken: DraftStorage = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('quota');
      },
      removeItem: () => {
        throw new Error('denied');
      },
    };
    const drafts = new Drafts(broken, 'me');
    drafts.set('c1', { text: 'x', mode: 'reply' });
    assert.equal(drafts.get('c1'), undefined);
    const storage = new MemoryStorage();
    storage.setItem('parley.inbox.draft.me.c1', '{not json');
    assert.equal(new Drafts(storage, 'me').get('c1'), undefined);
    assert.equal(new Drafts(undefined, 'me').get('c1'), undefined);
  });
});

describe('composer mentions', () => {
  it('finds the @ being typed before the caret', () => {
    assert.deepEqual(mentionAt('Ask @ki', 7), { start: 4, query: 'ki' });
    assert.deepEqual(mentionAt('@', 1), { start: 0, query: '' });
    assert.equal(mentionAt('mail kim@acme', 13), undefined, 'an email is no mention');
    assert.equal(mentionAt('Ask @kim now', 12), undefined);
  });

  it('matches colleagues by the start of a word of their name or email', () => {
    assert.deepEqual(matchColleagues([kim, ann], 'le'), [kim]);
    assert.deepEqual(matchColleagues([kim, ann], 'AN'), [ann]);
    assert.deepEqual(matchColleagues([kim, ann], ''), [kim, ann]);
    assert.deepEqual(matchColleagues([kim, ann], 'zz'), []);
  });

  it('inserts a handle and keeps only the mentions still in the text', () => {
    assert.equal(handleOf(kim), 'Kim_Lee');
    assert.equal(handleOf(ann), 'ann');
    const next = insertMention('Ask @ki please', 4, 7, kim);
    assert.deepEqual(next, { text: 'Ask @Kim_Lee  please', caret: 13 });
    assert.deepEqual(mentionedIds('Ask @Kim_Lee, and @ann.', [kim, ann, kim]), ['u1', 'u2']);
    assert.deepEqual(mentionedIds('Ask nobody', [kim]), []);
    assert.deepEqual(mentionedIds('Ask @Kim_Leeroy', [kim]), []);
  });
});

describe('inbox shortcuts', () => {
  const key = (k: string, over: Partial<Parameters<typeof shortcutFor>[0]> = {}) =>
    shortcutFor({
      key: k,
      ctrlKey: false,
      metaKey: false,
      altKey: false,
      targetTag: 'BODY',
      targetEditable: false,
      ...over,
    });

  it('maps single keys to actions outside text fields only', () => {
    assert.equal(key('j'), 'next');
    assert.equal(key('k'), 'previous');
    assert.equal(key('a'), 'assign');
    assert.equal(key('e'), 'resolve');
    assert.equal(key('r'), 'compose');
    assert.equal(key('/'), 'compose');
    assert.equal(key('?'), 'help');
    assert.equal(key('x'), undefined);
    assert.equal(key('j', { targetTag: 'TEXTAREA' }), undefined);
    assert.equal(key('j', { targetTag: 'INPUT' }), undefined);
    assert.equal(key('j', { targetTag: 'DIV', targetEditable: true }), undefined);
    assert.equal(key('j', { ctrlKey: true }), undefined);
    assert.equal(key('e', { metaKey: true }), undefined);
  });

  it('moves to the next or previous conversation, clamped at both ends', () => {
    const ids = ['a', 'b', 'c'];
    assert.equal(neighbour(ids, undefined, 1), 'a');
    assert.equal(neighbour(ids, 'a', 1), 'b');
    assert.equal(neighbour(ids, 'c', 1), 'c');
    assert.equal(neighbour(ids, 'a', -1), 'a');
    assert.equal(neighbour(ids, 'gone', -1), 'a');
    assert.equal(neighbour([], 'a', 1), undefined);
  });
});
