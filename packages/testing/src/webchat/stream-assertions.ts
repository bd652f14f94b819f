import assert from 'node:assert/strict';
import type { MessageEnvelope } from '@parley/server/internal/webchat/messages/message';

/**
 * The streamed-reply contract (docs/design.md "MessageEnvelope"): version 1; sequence 1, 2, 3… for one message; first a
 * partial with a typing block; then `replace` partials whose markdown only grows; exactly one final `complete`.
 */
export function assertStreamedReply(envelopes: MessageEnvelope[]): void {
  assert.ok(
    envelopes.length >= 3,
    `a streamed reply has at least typing, one partial and complete (got ${envelopes.length})`,
  );
  envelopes.forEach((e, i) => {
    assert.equal(e.version, 1);
    assert.equal(e.sequence, i + 1, 'sequences rise by one from 1');
  });
  const [first] = envelopes;
  assert.equal(first!.operation, 'replace');
  assert.equal(first!.message_snapshot.status, 'partial');
  assert.deepEqual(
    first!.message_snapshot.blocks.map((b) => b.type),
    ['typing'],
  );
  assert.equal((first!.message_snapshot.blocks[0] as { typing: boolean }).typing, true);
  let previous = '';
  for (const e of envelopes.slice(1, -1)) {
    assert.equal(e.operation, 'replace');
    assert.equal(e.message_snapshot.status, 'partial');
    const content = markdownOf(e);
    assert.ok(content.startsWith(previous) && content.length > previous.length, 'partial markdown grows');
    previous = content;
  }
  const last = envelopes.at(-1)!;
  assert.equal(last.operation, 'complete');
  assert.equal(last.message_snapshot.status, 'complete');
  assert.ok(markdownOf(last).startsWith(previous));
  assert.equal(envelopes.filter((e) => e.operation === 'complete').length, 1, 'exactly one complete');
}

export function markdownOf(e: MessageEnvelope): string {
  return e.message_snapshot.blocks
    .filter((b) => b.type === 'markdown')
    .map((b) => (b as { content: string }).content)
    .join('');
}
