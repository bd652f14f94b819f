import { createDelta } from 'fossil-delta';
import type { Publication } from '../broker/types.ts';
import { encodePublicationPush } from '../protocol/codec.ts';
import {
  encodeProtobufPublicationPush,
  encodeProtobufReply,
  protoPublication,
} from '../protocol/protobuf.ts';
import { SharedPush } from './shared-push.ts';

/**
 * Fossil delta compression (docs/protocol.md "Delta compression"; the algorithm of
 * https://fossil-scm.org/home/doc/tip/www/delta_encoder_algorithm.wiki, from the `fossil-delta` package). A subscriber
 * that negotiated it gets every publication either full or, when the publication was published for delta delivery and
 * the subscriber holds the previous one, as a delta against it. In the JSON protocol `data` is then a JSON string
 * (the escaped document, or the escaped delta), as the client expects; in Protobuf it is the bytes.
 *
 * Deltas are computed per node against the publication this node delivered last on the channel, once per
 * publication whatever the number of subscribers; a subscriber is sent one only when what it last received is that
 * same document, so a subscriber that just joined, missed one, or recovered gets the full document first.
 */
export class DeltaPushes {
  private fullPush: SharedPush | undefined;
  private deltaPush: SharedPush | undefined;

  constructor(
    private readonly channel: string,
    private readonly publication: Publication,
    /** Data of the publication this node delivered before this one on the channel. */
    private readonly previous: string | undefined,
  ) {}

  /** The publication with its whole document (`delta` unset). */
  full(): SharedPush {
    const { channel, publication } = this;
    this.fullPush ??= new SharedPush(
      () => encodePublicationPush(channel, publication, JSON.stringify(publication.data)),
      () => encodeProtobufPublicationPush(channel, publication),
    );
    return this.fullPush;
  }

  /**
   * The publication as a delta against `previous`; the full one when there is no previous document, or when the delta
   * would not be smaller (Centrifugo does the same), or could not travel as text.
   */
  delta(): SharedPush {
    this.deltaPush ??= this.buildDelta();
    return this.deltaPush;
  }

  private buildDelta(): SharedPush {
    const { channel, publication, previous } = this;
    if (previous === undefined) return this.full();
    const target = Buffer.from(publication.data);
    const patch = Buffer.from(createDelta(Buffer.from(previous), target));
    const text = patch.toString('utf8');
    // The JSON protocol carries the delta as a string: it must survive the UTF-8 round trip byte for byte.
    if (patch.length >= target.length || !Buffer.from(text).equals(patch)) return this.full();
    return new SharedPush(
      () => encodePublicationPush(channel, publication, JSON.stringify(text), true),
      () => encodeProtobufReply({ push: { channel, pub: protoPublication(publication, patch, true) } }),
    );
  }
}
