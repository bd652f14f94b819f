import { BrokerError } from './errors.ts';
import type { ClientInfo, Publication } from './types.ts';

/**
 * Wire format of what nodes exchange over Redis. `data` is raw JSON text and is carried verbatim after the first
 * newline, so a publication is never re-serialised (JSON.stringify output has no raw newline, which makes the
 * header unambiguous). Publication messages are `p<offset>:<epoch>:<header>\n<data>`; the Lua publish script
 * writes offset and epoch (both empty without history). Join/leave are `j<info>` / `l<info>`.
 */
interface PublicationHeader {
  t: number;
  i?: ClientInfo;
  g?: Record<string, string>;
  /** 1 = published for delta delivery (`Publication.delta`). */
  d?: 1;
}

/** `<header JSON>\n<data>`: stored as the stream entry and published after the position prefix. */
export function encodePublicationBody(
  data: string,
  time: number,
  info: ClientInfo | undefined,
  tags: Record<string, string> | undefined,
  delta = false,
): string {
  const header: PublicationHeader = { t: time };
  if (info !== undefined) header.i = info;
  if (tags !== undefined) header.g = tags;
  if (delta) header.d = 1;
  return `${JSON.stringify(header)}\n${data}`;
}

export function decodePublicationBody(body: string, offset: number | undefined): Publication {
  const newline = body.indexOf('\n');
  if (newline < 0) throw new BrokerError('broker_bad_reply', 'publication body without header');
  const header = JSON.parse(body.slice(0, newline)) as PublicationHeader;
  const publication: Publication = { data: body.slice(newline + 1), time: header.t };
  if (offset !== undefined) publication.offset = offset;
  if (header.i !== undefined) publication.info = header.i;
  if (header.g !== undefined) publication.tags = header.g;
  if (header.d === 1) publication.delta = true;
  return publication;
}

export type DecodedMessage =
  | { kind: 'pub'; publication: Publication; epoch: string | undefined }
  | { kind: 'join' | 'leave'; info: ClientInfo };

export function encodeJoin(info: ClientInfo): string {
  return `j${JSON.stringify(info)}`;
}

export function encodeLeave(info: ClientInfo): string {
  return `l${JSON.stringify(info)}`;
}

export function encodeUnpositionedPublication(body: string): string {
  return `p::${body}`;
}

export function decodeChannelMessage(message: string): DecodedMessage {
  switch (message[0]) {
    case 'p': {
      const offsetEnd = message.indexOf(':', 1);
      const epochEnd = message.indexOf(':', offsetEnd + 1);
      if (offsetEnd < 0 || epochEnd < 0) throw new BrokerError('broker_bad_reply', 'malformed publication');
      const offsetText = message.slice(1, offsetEnd);
      const epoch = message.slice(offsetEnd + 1, epochEnd);
      const offset = offsetText === '' ? undefined : Number(offsetText);
      return {
        kind: 'pub',
        publication: decodePublicationBody(message.slice(epochEnd + 1), offset),
        epoch: epoch === '' ? undefined : epoch,
      };
    }
    case 'j':
      return { kind: 'join', info: JSON.parse(message.slice(1)) as ClientInfo };
    case 'l':
      return { kind: 'leave', info: JSON.parse(message.slice(1)) as ClientInfo };
    default:
      throw new BrokerError('broker_bad_reply', `unknown message type ${JSON.stringify(message[0])}`);
  }
}
