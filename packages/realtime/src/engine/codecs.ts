import { type Command, decodeFrame } from '../protocol/codec.ts';
import { decodeProtobufCommands, jsonReplyToProtobuf } from '../protocol/protobuf.ts';
import type { SharedPush } from './shared-push.ts';
import type { EncodedFrame } from './transport.ts';

/**
 * The client protocol format of one connection, chosen when it opens (docs/protocol.md "Protobuf"): how its
 * incoming data splits into commands and how the engine's replies and pushes are encoded for it. Replies are built
 * as JSON text once; a Protobuf connection converts them, and takes the Protobuf form of shared pushes.
 */
export interface SessionCodec {
  readonly name: 'json' | 'protobuf';
  /** Throws on malformed input (the session then closes with 3501). */
  decodeCommands(data: Buffer): Command[];
  /** A reply, push or ping built as JSON text. */
  encode(json: string): EncodedFrame;
  /** A push shared by a channel's subscribers. */
  shared(push: SharedPush): EncodedFrame;
}

export const JSON_CODEC: SessionCodec = {
  name: 'json',
  decodeCommands: (data) => decodeFrame(data.toString('utf8')),
  encode: (json) => json,
  shared: (push) => push.json(),
};

export const PROTOBUF_CODEC: SessionCodec = {
  name: 'protobuf',
  decodeCommands: (data) => decodeProtobufCommands(data),
  encode: (json) => jsonReplyToProtobuf(json),
  shared: (push) => push.protobuf(),
};
