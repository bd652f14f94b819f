import { type PreframedMessage, preframeBinary, preframeString } from './preframed.ts';

/**
 * A push that every subscriber of a channel on this node receives alike (a publication, a join or a leave): encoded
 * at most once per format, JSON and Protobuf, whatever the number of subscribers, together with its WebSocket frame
 * (preframed.ts). Sessions of either format and any transport take the form they need.
 */
export class SharedPush {
  private jsonForm: PreframedMessage | undefined;
  private protobufForm: PreframedMessage | undefined;

  constructor(
    private readonly encodeJson: () => string,
    private readonly encodeProtobuf: () => Buffer,
    /** What it carries, for metrics (engine/observer.ts). */
    readonly kind: 'publication' | 'join' | 'leave' = 'publication',
  ) {}

  json(): PreframedMessage {
    this.jsonForm ??= preframeString(this.encodeJson());
    return this.jsonForm;
  }

  protobuf(): PreframedMessage {
    this.protobufForm ??= preframeBinary(this.encodeProtobuf());
    return this.protobufForm;
  }
}
