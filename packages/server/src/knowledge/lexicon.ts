import { fold } from './ranking.ts';

/**
 * A small built-in lexicon of general English that visitors and help articles word differently (docs/knowledge.md
 * "Synonyms"): a visitor asks about a "package", a "receipt" or "removing" an account, the article says "parcel",
 * "invoice" and "deleting". At query time each question word is searched by its own spelling and by the other words of
 * its group, exactly like a corrected typo (packages/server/src/knowledge/vocabulary.ts): a passage holding any of them
 * holds the word.
 *
 * It is the vocabulary of online shops and services in general — orders, payments, delivery, returns, accounts,
 * subscriptions, support — and British/American spellings, not any one company's words: those are the company's own
 * synonyms (packages/server/src/knowledge/synonyms.ts). Groups are kept small and of near-equal meaning: a word
 * that is ambiguous across topics (like "code" or "key") is in none.
 */
const GROUPS: readonly string[] = [
  // Buying and orders
  'buy purchase',
  'shop store',
  'cancel cancellation',
  'change update modify edit amend alter',
  'exchange swap switch',
  'wrong incorrect mistaken',
  'basket cart',
  // Money
  'price cost pricing expensive cheap fee',
  'charge bill debit',
  'pay payment',
  'receipt invoice',
  'refund reimburse reimbursement',
  'discount coupon voucher promo',
  'tax vat',
  'amex mastercard visa maestro card',
  // Delivery
  'parcel package shipment',
  'ship dispatch send',
  'shipping delivery postage',
  'track trace tracking',
  'late delayed overdue',
  'lost missing',
  'abroad overseas international',
  // Damage, faults and repair
  'damaged broken cracked dented torn smashed crushed defective faulty',
  'repair fix mend',
  'warranty guarantee',
  'problem issue trouble',
  // Accounts and security
  'register signup registration',
  'login signin logon',
  'delete remove erase',
  'email mail',
  'verify confirm confirmation',
  'hacked compromised breach',
  'scam fraud phishing',
  'bug flaw',
  '2fa mfa',
  // Subscriptions and communication
  'subscription membership',
  'pause hold suspend',
  'unsubscribe optout',
  'contact reach',
  'phone telephone call',
  'reply respond response answer',
  'complaint complain dispute',
  'question query enquiry inquiry',
  // Businesses, people, places
  'wholesale trade bulk',
  'company business',
  'customer client',
  'farmer grower producer',
  'child children kid kids minor teenager',
  'holiday vacation',
  'class course lesson workshop',
  'book booking reserve reservation',
  'manual instructions guide',
  'recycle recyclable recycling compost',
  'country countries origin',
  // Units, written out or abbreviated ("18 g", "250 ml")
  'gram g',
  'kilogram kilo kg',
  'millilitre milliliter ml',
  'litre liter',
  'centimetre centimeter cm',
  'millimetre millimeter mm',
  // British and American spellings
  'neighbour neighbor',
  'colour color',
  'favourite favorite',
  'programme program',
  'centre center',
  'catalogue catalog',
  'organise organize',
  'cheque check',
  'jewellery jewelry',
  'licence license',
  'aluminium aluminum',
  'grey gray',
];

/** Two-word phrases that name one thing, read as that word before the question is split into terms. */
const PHRASES: ReadonlyArray<[RegExp, string]> = [
  [/\bsign(?:ed|ing)? up\b/giu, 'register'],
  [/\b(?:log(?:ged|ging)? (?:in|on)|sign(?:ed|ing)? in)(?:to)?\b/giu, 'login'],
  [/\bsend(?:ing)? (?:it |them )?back\b/giu, 'return'],
  [/\bmoney back\b/giu, 'refund'],
  [/\bcash on delivery\b/giu, 'cod payment delivery'],
  [/\bopt(?:ed|ing)? out\b/giu, 'unsubscribe'],
  [/\btwo[- ]factor\b/giu, '2fa'],
  [/\be-mail\b/giu, 'email'],
];

/** Each word's group mates, keyed by its folded form so that "parcels" and "parcel" find the same group. */
const SYNONYMS: ReadonlyMap<string, readonly string[]> = (() => {
  const map = new Map<string, Set<string>>();
  for (const group of GROUPS) {
    const words = group.split(' ');
    for (const word of words) {
      const mates = map.get(fold(word)) ?? new Set<string>();
      for (const other of words) if (fold(other) !== fold(word)) mates.add(other);
      map.set(fold(word), mates);
    }
  }
  return new Map([...map].map(([word, mates]) => [word, [...mates]]));
})();

/** The question with its known two-word phrases read as one word ("sign up" → "register"). */
export function readPhrases(question: string): string {
  let text = question;
  for (const [phrase, word] of PHRASES) text = text.replace(phrase, word);
  return text;
}

/** The other words of `word`'s groups in the built-in lexicon; empty when it has none. */
export function builtInSynonyms(word: string): readonly string[] {
  return SYNONYMS.get(fold(word)) ?? [];
}
