import type { MessageEnvelope, MessageSnapshot } from '../messages/message.ts';
import { ENVELOPE_VERSION } from '../messages/message.ts';
import { channelOf } from './conversation.ts';

/**
 * Publishes envelopes on conversation channels. `history: false` keeps a publication out of the channel's
 * 100-entry history so streaming partials never push completed messages out of what reconnecting clients recover.
 */
export interface Broadcaster {
  publish(channel: string, envelope: MessageEnvelope, options: { history: boolean }): Promise<void>;
}

export function envelopeOf(snapshot: MessageSnapshot, sequence: number): MessageEnvelope {
  return {
    version: ENVELOPE_VERSION,
    operation: snapshot.status === 'complete' ? 'complete' : 'replace',
    sequence,
    message_snapshot: snapshot,
  };
}

export function announce(
  broadcaster: Broadcaster,
  companyId: string,
  snapshot: MessageSnapshot,
  sequence: number,
  history = true,
): Promise<void> {
  return broadcaster.publish(channelOf(companyId, snapshot.conversation_id), envelopeOf(snapshot, sequence), {
    history,
  });
}
