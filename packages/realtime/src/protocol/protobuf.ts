import protobuf from 'protobufjs';
import type { ClientInfo, Publication } from '../broker/types.ts';
import { type Command, markTooDeep } from './codec.ts';
import { ErrorCode } from './codes.ts';
import { ClientError } from './errors.ts';
import { exceedsJsonDepth } from './json-depth.ts';
import { protocolType } from './schema.ts';

/**
 * The Protobuf client protocol (docs/protocol.md "Protobuf"): the same commands and replies as JSON, encoded with
 * the types of src/protocol/client.proto, each length-delimited. The engine builds replies as JSON text in one place
 * and converts them here for Protobuf connections, so both formats carry exactly the same fields; `bytes` fields,
 * embedded JSON in the JSON protocol, become the UTF-8 bytes of that JSON.
 */

const COMMAND = protocolType('Command');
const REPLY = protocolType('Reply');
const EMULATION_REQUEST = protocolType('EmulationRequest');

export class ProtobufDecodeError extends Error {
  readonly code = 'realtime_protobuf_malformed' as const;
}

/** How `convertMessage` turns the value of one `bytes` field (or one item of a repeated or map one). */
type BytesConversion = (item: unknown) => unknown;

/**
 * A message's known fields with every `bytes` value converted, recursing into nested messages: the one walk over
 * the schema behind both directions (embedded JSON → UTF-8 bytes when encoding, bytes → parsed JSON when decoding).
 * Fields the schema does not know, and absent (null/undefined) values, are dropped.
 */
function convertMessage(
  type: protobuf.Type,
  value: Record<string, unknown>,
  bytes: BytesConversion,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in value) {
    const field = type.fields[key];
    const item = value[key];
    if (field === undefined || item === undefined || item === null) continue;
    out[key] = convertField(field, item, bytes);
  }
  return out;
}

function convertField(field: protobuf.Field, value: unknown, bytes: BytesConversion): unknown {
  const convert = (item: unknown): unknown => {
    if (field.type === 'bytes') return bytes(item);
    const nested = field.resolvedType;
    if (nested instanceof protobuf.Type)
      return convertMessage(nested, item as Record<string, unknown>, bytes);
    return item;
  };
  if (field instanceof protobuf.MapField) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = convert(v);
    return out;
  }
  if (field.repeated) return (value as unknown[]).map(convert);
  return convert(value);
}

/** Embedded JSON (a parsed value) as the UTF-8 bytes of its text. */
function jsonToBytes(item: unknown): Buffer {
  return Buffer.from(JSON.stringify(item));
}

/** One reply (or push, or ping) built as JSON text, as a length-delimited Protobuf `Reply`. */
export function jsonReplyToProtobuf(json: string): Buffer {
  const value = JSON.parse(json) as Record<string, unknown>;
  return Buffer.from(REPLY.encodeDelimited(convertMessage(REPLY, value, jsonToBytes)).finish());
}

/** A `Reply` object (Protobuf shape: `bytes` fields already bytes), length-delimited. */
export function encodeProtobufReply(reply: Record<string, unknown>): Buffer {
  return Buffer.from(REPLY.encodeDelimited(reply).finish());
}

function protoClientInfo(info: ClientInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { user: info.user, client: info.client };
  if (info.connInfo) out.conn_info = Buffer.from(info.connInfo);
  if (info.chanInfo) out.chan_info = Buffer.from(info.chanInfo);
  return out;
}

/** A publication as the Protobuf `Publication` object; `data` given as bytes (a fossil delta, or the JSON text). */
export function protoPublication(
  publication: Publication,
  data: Uint8Array,
  delta = false,
): Record<string, unknown> {
  const pub: Record<string, unknown> = { data };
  if (publication.info) pub.info = protoClientInfo(publication.info);
  if (publication.offset) pub.offset = publication.offset;
  if (publication.tags && Object.keys(publication.tags).length > 0) pub.tags = publication.tags;
  if (delta) pub.delta = true;
  return pub;
}

/**
 * The fan-out hot path: a publication push built straight from the publication, without a JSON round trip
 * (encoded once per channel and shared by every Protobuf subscriber, like the JSON one).
 */
export function encodeProtobufPublicationPush(channel: string, publication: Publication): Buffer {
  return encodeProtobufReply({
    push: { channel, pub: protoPublication(publication, Buffer.from(publication.data)) },
  });
}

/**
 * `bytes` that are not UTF-8 JSON: kept so the handler can refuse them (107) instead of guessing. Every handler
 * serialises a command's data with `JSON.stringify`, which calls `toJSON`: refusing there covers them all, where the
 * default serialisation would turn the bytes into a `{"bytes":{…}}` object that passes for JSON.
 */
class InvalidData {
  constructor(readonly bytes: Uint8Array) {}

  toJSON(): never {
    throw new ClientError(ErrorCode.badRequest);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A decoded `bytes` field in the shape the JSON decoder produces: parsed as JSON, an empty one left out. Bytes that
 * are not UTF-8 JSON become `InvalidData`, which the handlers answer with 107: publications are shared with JSON
 * subscribers, which can only embed JSON (docs/protocol.md "Protobuf"). 64-bit integers read as numbers (TO_OBJECT).
 */
function parseJsonBytes(item: unknown): unknown {
  const bytes = item as Uint8Array;
  if (bytes.length === 0) return undefined;
  try {
    const text = UTF8.decode(bytes);
    // Never parsed: the command is answered 400 "json too deep" without its data (codec.ts `markTooDeep`).
    if (exceedsJsonDepth(text)) return TOO_DEEP_DATA;
    return JSON.parse(text);
  } catch {
    return new InvalidData(bytes);
  }
}

/** Stands in for `bytes` whose JSON nests deeper than `MAX_JSON_DEPTH`; its command is marked too deep. */
const TOO_DEEP_DATA = Symbol('too deep');

const TO_OBJECT: protobuf.IConversionOptions = { longs: Number };

/** Splits a Protobuf frame (length-delimited `Command`s) into commands; malformed → `ProtobufDecodeError`. */
export function decodeProtobufCommands(data: Uint8Array): Command[] {
  const reader = protobuf.Reader.create(data);
  const commands: Command[] = [];
  try {
    while (reader.pos < reader.len) {
      const message = COMMAND.decodeDelimited(reader);
      let tooDeep = false;
      const command = convertMessage(COMMAND, COMMAND.toObject(message, TO_OBJECT), (item) => {
        const value = parseJsonBytes(item);
        if (value !== TOO_DEEP_DATA) return value;
        tooDeep = true;
        return undefined;
      }) as Command;
      if (tooDeep) markTooDeep(command);
      commands.push(command);
    }
  } catch (error) {
    throw new ProtobufDecodeError(`malformed protobuf command: ${(error as Error).message}`);
  }
  return commands;
}

/** An `EmulationRequest` in Protobuf (`/emulation` with `Content-Type: application/octet-stream`). */
export function decodeProtobufEmulationRequest(data: Uint8Array): {
  node: string;
  session: string;
  data: Buffer;
} {
  try {
    const message = EMULATION_REQUEST.toObject(EMULATION_REQUEST.decode(data)) as {
      node?: string;
      session?: string;
      data?: Uint8Array;
    };
    return {
      node: message.node ?? '',
      session: message.session ?? '',
      data: Buffer.from(message.data ?? new Uint8Array()),
    };
  } catch (error) {
    throw new ProtobufDecodeError(`malformed emulation request: ${(error as Error).message}`);
  }
}
