import { randomUUID } from 'node:crypto';
import type { MessageRole, MessageSnapshot } from '@parley/webchat-protocol';

/** Builds complete message snapshots for responder tests (the shapes the conversation engine hands responders). */
export function messageOf(
  conversationId: string,
  role: MessageRole,
  content: string,
  extra: Partial<MessageSnapshot> = {},
): MessageSnapshot {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    id: randomUUID(),
    conversation_id: conversationId,
    role,
    author:
      role === 'user' || role === 'system'
        ? null
        : { id: randomUUID(), name: role === 'agent' ? 'Sam' : 'Ava' },
    status: 'complete',
    blocks: [{ id: 'b1', type: 'markdown', content }],
    client_message_id: role === 'user' ? randomUUID() : null,
    position: extra.position ?? 1,
    created_at: at,
    updated_at: at,
    ...extra,
  };
}

export async function collect<T>(deltas: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const delta of deltas) out.push(delta);
  return out;
}
