import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERROR_BLOCK_CODES, ERROR_CODES } from './codes.ts';

const DOC = new URL('../../../../docs/errors.md', import.meta.url);

/** Every code a table row of docs/errors.md starts with (`| \`code\` | …`); numeric realtime codes are not codes here. */
function documentedCodes(): Set<string> {
  const codes = new Set<string>();
  for (const line of readFileSync(DOC, 'utf8').split('\n')) {
    const match = /^\|\s*`([a-z][a-z_]*)`/.exec(line);
    if (match) codes.add(match[1]!);
  }
  return codes;
}

describe('docs/errors.md and the code agree', () => {
  const inCode = new Set<string>([...ERROR_CODES, ...ERROR_BLOCK_CODES]);
  const inDoc = documentedCodes();

  it('documents every code the code can answer with', () => {
    assert.deepEqual(
      [...inCode].filter((c) => !inDoc.has(c)),
      [],
      'codes missing from docs/errors.md',
    );
  });

  it('documents no code the code does not have', () => {
    assert.deepEqual(
      [...inDoc].filter((c) => !inCode.has(c)),
      [],
      'codes in docs/errors.md that nothing answers with',
    );
  });

  it('lists each code once', () => {
    assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length);
    assert.equal(new Set(ERROR_BLOCK_CODES).size, ERROR_BLOCK_CODES.length);
  });
});
