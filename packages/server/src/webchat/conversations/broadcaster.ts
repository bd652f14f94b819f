import { channelOf, envelopeOf, type MessageEnvelope, type MessageSnapshot } from '@parley/webchat-protocol';
import type { Logger } from 'pino';

/**
 * Publishes envelopes on conversation channels. `history: false` keeps a publication out of the channel's
 * 100-entry history: only `complete` envelopes go there, one per message, so the history holds the channel's last
 * 100 messages. `idempotencyKey` makes a repeated publication a no-op within the broker's idempotency window.
 */
export interface Broadcaster {
  publish(
    channel: string,
    envelope: MessageEnvelope,
    options: { history: boolean; idempotencyKey?: string },
  ): Promise<void>;
}

/**
 * Publishes one envelope of `snapshot`. A `complete` goes into history under the idempotency key
 * `{message id}:{sequence}`, so announcing it again (a client's retry, `announceUntilDelivered`) never adds a
 * second history entry or a second delivery.
 */
export function announce(
  broadcaster: Broadcaster,
  companyId: string,
  snapshot: MessageSnapshot,
  sequence: number,
): Promise<void> {
  const complete = snapshot.status === 'complete';
  return broadcaster.publish(channelOf(companyId, snapshot.conversation_id), envelopeOf(snapshot, sequence), {
    history: complete,
    ...(complete ? { idempotencyKey: `${snapshot.id}:${sequence}` } : {}),
  });
}

/** Delays between attempts of `announceUntilDelivered` (about a minute in all, longer than a broker restart). */
const RETRY_DELAYS_MS = [250, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

/**
 * Announces a stored `complete` and, if the broker cannot take it now, keeps trying in the background: the
 * message is durable, and clients that follow it must see it complete rather than stay on a partial. Resolves
 * after the first attempt either way (callers never wait for an outage to end).
 */
export async function announceUntilDelivered(
  broadcaster: Broadcaster,
  companyId: string,
  snapshot: MessageSnapshot,
  sequence: number,
  logger: Logger,
): Promise<void> {
  try {
    await announce(broadcaster, companyId, snapshot, sequence);
    return;
  } catch (err) {
    logger.warn(
      { err: { message: (err as Error).message }, messageId: snapshot.id },
      'announce failed; retrying',
    );
  }
  void (async () => {
    for (const delay of RETRY_DELAYS_MS) {
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
      try {
        await announce(broadcaster, companyId, snapshot, sequence);
        return;
      } catch {
        // next attempt
      }
    }
    logger.warn(
      { messageId: snapshot.id },
      'gave up announcing a stored message; clients see it on their next load',
    );
  })();
}
