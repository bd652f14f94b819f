import { envelopeOf, type InFlightMessages, parseChannel } from '@parley/webchat-protocol';
import type { LiveSnapshots } from '../conversations/live-snapshots.ts';
import type { MessageStore } from '../messages/message-store.ts';

/**
 * The subscribe result `data` of a conversation channel (docs/asyncapi.yaml "InFlightMessages"): what a client
 * subscribing to a conversation needs besides history, the replies still streaming, each in its latest known
 * state. History keeps only `complete` envelopes (one per message), so a client that joins or returns mid-stream
 * learns of a partial message here. A reply streamed by this node carries the sequence of its
 * newest envelope; one streamed by another node carries what it last persisted, with sequence 0 — below every
 * envelope of that message, so the next live partial (or the `complete`) replaces it under the ordering rule.
 */
export async function inFlightOf(
  store: MessageStore,
  live: LiveSnapshots,
  channel: string,
): Promise<InFlightMessages | undefined> {
  const target = parseChannel(channel);
  if (!target) return undefined;
  const partial = await store.inFlight(target.conversationId);
  if (partial.length === 0) return { in_flight: [] };
  return {
    in_flight: partial.map((stored) => {
      const streaming = live.get(stored.id);
      return streaming ? envelopeOf(streaming.snapshot, streaming.sequence) : envelopeOf(stored, 0);
    }),
  };
}
