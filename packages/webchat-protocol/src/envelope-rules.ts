import {
  ENVELOPE_OPERATIONS,
  ENVELOPE_VERSION,
  type EnvelopeOperation,
  type ReceivedEnvelope,
} from './envelopes.ts';
import type { ReceivedSnapshot } from './messages.ts';

/**
 * The client rules of the spec ("Events") as pure functions, for every client of a conversation channel (the SDK,
 * the portal's inbox): an envelope whose sequence is not above the last one seen for its message is dropped
 * (rule 1), one with an unknown `version` is ignored (rule 2), and so is one with an operation this version does not
 * define.
 */

/** Why {@link readEnvelope} refused a publication; a refused publication changes nothing. */
export type EnvelopeRefusal = 'invalid' | 'unknown-version' | 'unknown-operation';

/** An envelope of this protocol version with a known operation, its snapshot checked. */
export type KnownEnvelope = ReceivedEnvelope & {
  version: typeof ENVELOPE_VERSION;
  operation: EnvelopeOperation;
};

/** What {@link readEnvelope} made of a publication: the envelope, or why it is to be ignored. */
export type EnvelopeReading =
  | { envelope: KnownEnvelope; refusal?: undefined }
  | { envelope?: undefined; refusal: EnvelopeRefusal };

/**
 * Reads a conversation channel's publication `data` as an envelope, checking in this order: an object (else
 * `invalid`), this protocol's `version` (else `unknown-version`, rule 2), a known operation (else
 * `unknown-operation`), an integer `sequence` and a well-formed snapshot (else `invalid`). Whether the envelope is
 * new enough is {@link acceptsEnvelope}'s question.
 *
 * @example
 * ```ts
 * const { envelope, refusal } = readEnvelope(publication.data);
 * if (refusal) return; // ignored
 * ```
 */
export function readEnvelope(data: unknown): EnvelopeReading {
  if (!isRecord(data)) return { refusal: 'invalid' };
  if (data.version !== ENVELOPE_VERSION) return { refusal: 'unknown-version' };
  if (!isEnvelopeOperation(data.operation)) return { refusal: 'unknown-operation' };
  if (!Number.isInteger(data.sequence) || !isReceivedSnapshot(data.message_snapshot))
    return { refusal: 'invalid' };
  return { envelope: data as unknown as KnownEnvelope };
}

/**
 * Whether a client applies `envelope` to a message whose last applied envelope had `lastSeenSequence`
 * (`undefined`: the client knows nothing of the message yet): only an envelope of this protocol version, with a
 * known operation, and a sequence above the last one seen (rule 1: an equal or lower one is a duplicate or arrived
 * out of order).
 *
 * @example
 * ```ts
 * acceptsEnvelope(2, { version: 1, operation: 'replace', sequence: 3 }); // true
 * acceptsEnvelope(3, { version: 1, operation: 'replace', sequence: 3 }); // false: not above the last seen
 * ```
 */
export function acceptsEnvelope(
  lastSeenSequence: number | undefined,
  envelope: Pick<ReceivedEnvelope, 'version' | 'operation' | 'sequence'>,
): boolean {
  return (
    envelope.version === ENVELOPE_VERSION &&
    isEnvelopeOperation(envelope.operation) &&
    Number.isInteger(envelope.sequence) &&
    (lastSeenSequence === undefined || envelope.sequence > lastSeenSequence)
  );
}

/** Whether `value` is an operation this protocol version defines (`replace`, `complete`). */
export function isEnvelopeOperation(value: unknown): value is EnvelopeOperation {
  return (ENVELOPE_OPERATIONS as readonly unknown[]).includes(value);
}

/**
 * Whether `value` has the shape of a message snapshot as a client needs it: string `id`, `conversation_id` and
 * `role`, a known `status`, a list of blocks that each have a string `type`, and string timestamps. Blocks of
 * unknown types pass (they are kept, not interpreted).
 */
export function isReceivedSnapshot(value: unknown): value is ReceivedSnapshot {
  return (
    isRecord(value) &&
    typeof value.id === 'string' &&
    typeof value.conversation_id === 'string' &&
    typeof value.role === 'string' &&
    (value.status === 'partial' || value.status === 'complete') &&
    Array.isArray(value.blocks) &&
    value.blocks.every((b) => isRecord(b) && typeof b.type === 'string') &&
    typeof value.created_at === 'string' &&
    typeof value.updated_at === 'string'
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
