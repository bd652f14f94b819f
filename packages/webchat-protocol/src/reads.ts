import { ENVELOPE_VERSION } from './version.ts';

/** Whose read mark: the visitor's (every device of theirs) or the agents' (the company's inbox). */
export type ReadSide = 'visitor' | 'agent';

/**
 * The read marks of a conversation, carried by every subscribe result's `data` beside `in_flight`
 * (docs/asyncapi.yaml "InFlightMessages"): each side's mark is the `position` of the last message it has read
 * (0: none). A visitor message at or below `agent` has been seen by an agent.
 */
export interface ReadMarks {
  visitor: number;
  agent: number;
}

/**
 * A live publication on a conversation channel when a read mark moves (docs/asyncapi.yaml "ReadEvent"). It is
 * published outside channel history (history keeps one entry per message), so a client that was away learns the
 * marks from its next subscribe result instead. It is not a message envelope: clients of an older version ignore it
 * (no `operation`), and clients ignore fields and `event` names they do not know.
 */
export interface ReadEvent {
  version: typeof ENVELOPE_VERSION;
  event: 'read';
  reader: ReadSide;
  /** The new mark: the position of the last message this side has read. */
  position: number;
  /** The message at that position. */
  message_id: string | null;
  read_at: string;
}

/**
 * The read event a conversation channel's publication carries, or `undefined` for anything else (an envelope, an
 * unknown version or event).
 *
 * @example
 * ```ts
 * subscription.on('publication', ({ data }) => {
 *   const read = readEventOf(data);
 *   if (read?.reader === 'agent') showSeenUpTo(read.position);
 * });
 * ```
 */
export function readEventOf(data: unknown): ReadEvent | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const event = data as Partial<ReadEvent>;
  if (event.version !== ENVELOPE_VERSION || event.event !== 'read') return undefined;
  if (event.reader !== 'visitor' && event.reader !== 'agent') return undefined;
  if (!Number.isInteger(event.position)) return undefined;
  return event as ReadEvent;
}

/** The read marks of a subscribe result's `data`, or `undefined` when it has none (an older server). */
export function readMarksOf(data: unknown): ReadMarks | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const marks = (data as { read_marks?: unknown }).read_marks;
  if (typeof marks !== 'object' || marks === null) return undefined;
  const { visitor, agent } = marks as Partial<ReadMarks>;
  if (!Number.isInteger(visitor) || !Number.isInteger(agent)) return undefined;
  return { visitor: visitor!, agent: agent! };
}
