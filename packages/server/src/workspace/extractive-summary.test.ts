import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MessageSnapshot } from '../webchat/messages/message.ts';
import { extractiveSummary } from './extractive-summary.ts';

let position = 0;
const message = (role: string, content: string, status = 'complete'): MessageSnapshot =>
  ({
    id: `m${++position}`,
    conversation_id: 'c',
    position,
    role,
    status,
    author: null,
    blocks: [{ id: `b${position}`, type: 'markdown', content }],
    created_at: '2026-11-27T10:00:00.000Z',
    updated_at: '2026-11-27T10:00:00.000Z',
  }) as unknown as MessageSnapshot;

describe('extractive summary', () => {
  it('leads with the visitor’s question, keeps the sentences about the topic in order, leaves out notes', () => {
    const summary = extractiveSummary([
      message('digital_employee', 'Hello! How can I help you today?'),
      message('user', 'My espresso grinder order 4411 arrived broken. I want a refund for the grinder.'),
      message('note', 'Internal: reseller, check contract before refund grinder.'),
      message(
        'digital_employee',
        'Sorry to hear that. Refunds for a broken grinder take 5 days once we get the grinder back.',
      ),
      message('user', 'Nice weather today.'),
      message('agent', 'I have started the refund for order 4411; a courier collects the grinder tomorrow.'),
    ]);
    const lines = summary.split('\n');
    assert.equal(lines[0], 'Visitor: My espresso grinder order 4411 arrived broken.');
    assert.ok(lines.length <= 4, summary);
    assert.ok(
      lines.some((l) => l.startsWith('Agent: I have started the refund')),
      summary,
    );
    assert.ok(!summary.includes('Internal'), 'notes are never summarised');
    assert.ok(!summary.includes('weather'), 'off-topic small talk scores low');
  });

  it('is empty without messages and skips streaming ones', () => {
    assert.equal(extractiveSummary([]), '');
    assert.equal(extractiveSummary([message('user', 'half a thought', 'partial')]), '');
  });
});
