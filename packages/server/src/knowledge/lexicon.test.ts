import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtInSynonyms, readPhrases } from './lexicon.ts';
import { fold, queryTerms, rescore, SOURCE_TITLE_WEIGHT, SYNONYM_CREDIT } from './ranking.ts';

// The built-in lexicon (docs/knowledge.md "Synonyms") and coverage weights (docs/knowledge.md "Ranking"), as pure
// functions; knowledge.ranking.test.ts shows both through the search on each store.
describe('knowledge lexicon', () => {
  it('gives a word the other words of its group, whatever its ending, and nothing to a word of no group', () => {
    assert.ok(builtInSynonyms('receipt').includes('invoice'));
    assert.ok(builtInSynonyms('receipts').includes('invoice'));
    assert.ok(builtInSynonyms('package').includes('parcel'));
    assert.ok(builtInSynonyms('neighbor').includes('neighbour'));
    assert.ok(!builtInSynonyms('receipt').includes('receipt'));
    assert.deepEqual(builtInSynonyms('espresso'), []);
  });

  it('keeps ambiguous words out of every group', () => {
    for (const word of ['code', 'key', 'points', 'order']) assert.deepEqual(builtInSynonyms(word), [], word);
  });

  it('reads two-word phrases as one word before the question is split', () => {
    assert.equal(readPhrases('how do I sign up?'), 'how do I register?');
    assert.equal(readPhrases('I cannot Log In to my account'), 'I cannot login to my account');
    assert.equal(readPhrases('can I send it back'), 'can I return');
    assert.equal(readPhrases('is two-factor available'), 'is 2fa available');
    assert.equal(readPhrases('a sign on the door'), 'a sign on the door');
  });
});

describe('word folding and stop words', () => {
  it('folds a word family to one form: inflections, then verb-to-noun and adjective endings', () => {
    assert.equal(fold('delivered'), fold('delivery'));
    assert.equal(fold('payment'), fold('pay'));
    assert.equal(fold('confirmation'), fold('confirmed'));
    assert.equal(fold('accessible'), fold('accessibility'));
    assert.equal(fold('returnable'), fold('returns'));
    // A stem keeps at least three letters ("station" stays whole); a short stem may meet another word's, a cost of
    // folding without a dictionary that coverage, not matching, pays.
    assert.equal(fold('station'), 'station');
    assert.equal(fold('table'), fold('tables'));
    assert.equal(fold('comment'), 'com');
  });

  it('leaves negated and other contractions typed without an apostrophe out of the terms', () => {
    assert.deepEqual(queryTerms("what's the tracking link? it wasnt in the email, and it hasn't come"), [
      'tracking',
      'link',
      'email',
      'come',
    ]);
  });
});

describe('weighted coverage', () => {
  const passages = [
    { title: 'Tracking', body: 'Track your order on the tracking page.', rank: 1 },
    { title: 'Invoices', body: 'Download an invoice from your account.', rank: 1 },
  ];

  it('ranks the passage holding the rarer word first when each holds one of two words', () => {
    const terms = [['order'], ['invoice']];
    assert.equal(rescore(terms, passages, { weights: [0.5, 2] })[0]?.title, 'Invoices');
    assert.equal(rescore(terms, passages, { weights: [2, 0.5] })[0]?.title, 'Tracking');
  });

  it('counts a word found only through a synonym at SYNONYM_CREDIT, the word itself in full', () => {
    const terms = [['receipt', 'invoice']];
    const [bySynonym] = rescore(terms, passages, { exact: [1] });
    assert.equal(bySynonym?.title, 'Invoices');
    const [byWord] = rescore([['invoice']], passages);
    assert.ok(bySynonym!.score < byWord!.score);
    // The synonym is in the text and in the source's title ("Invoices"): each part credits it alike.
    assert.equal(
      bySynonym!.score,
      0.6 * SYNONYM_CREDIT + 0.15 * SYNONYM_CREDIT + SOURCE_TITLE_WEIGHT * SYNONYM_CREDIT + 0.25,
    );
  });

  it('scores on the same 0–1 scale with or without weights: every word found is full coverage', () => {
    const terms = [['invoice'], ['download']];
    const [weighted] = rescore(terms, passages, { weights: [3, 1] });
    const [plain] = rescore(terms, passages);
    assert.equal(weighted?.score, 1);
    assert.equal(plain?.score, 1);
  });
});
