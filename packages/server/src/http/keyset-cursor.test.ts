import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeCursor, encodeCursor, type KeysetPosition, keysetPage } from './keyset-cursor.ts';

describe('keyset cursor', () => {
  it('round-trips the position of the last row as an opaque, query-safe string', () => {
    const position = { updatedAt: '2026-11-22T00:00:00.000Z', id: '0f8b6c1e-8f4e-4c62-9d3a-1f2e3d4c5b6a' };
    const cursor = encodeCursor(position);
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeCursor(cursor), position);
  });

  it('refuses a cursor this API did not hand out with invalid_cursor (400)', () => {
    for (const bad of ['not a cursor', Buffer.from('[1,2]').toString('base64url'), ''])
      assert.throws(() => decodeCursor(bad), { code: 'invalid_cursor', status: 400 });
  });

  it('refuses a forged cursor whose strings hold U+0000 or a lone surrogate (src/http/unsafe-text.ts)', () => {
    for (const position of [
      ['2026-11-22T00:00:00.000Z\u0000', 'id'],
      ['2026-11-22T00:00:00.000Z', '\uD800'],
    ]) {
      // JSON.stringify writes both as \u escapes, which JSON.parse turns back into the characters.
      const forged = Buffer.from(JSON.stringify(position)).toString('base64url');
      assert.throws(() => decodeCursor(forged), { code: 'invalid_cursor', status: 400 });
    }
  });

  it('walks a list newest first, page by page, and says when the last page is reached', async () => {
    // Five rows ordered newest first by (updatedAt, id), as the services list them.
    const rows = [5, 4, 3, 2, 1].map((n) => ({ updatedAt: `2026-11-22T00:00:0${n}.000Z`, id: `row-${n}` }));
    const after = (p: KeysetPosition) => (r: KeysetPosition) =>
      r.updatedAt < p.updatedAt || (r.updatedAt === p.updatedAt && r.id < p.id);
    const fetchRows = async (q: { limit: number; before?: KeysetPosition }) =>
      (q.before ? rows.filter(after(q.before)) : rows).slice(0, q.limit);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 5; i++) {
      const page = await keysetPage(2, cursor, fetchRows);
      seen.push(...page.items.map((r) => r.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    assert.deepEqual(seen, ['row-5', 'row-4', 'row-3', 'row-2', 'row-1']);
    assert.equal(
      (await keysetPage(5, undefined, fetchRows)).nextCursor,
      null,
      'an exactly full page is the last',
    );
  });
});
