/**
 * Fields the JSON protocol writes even at their zero value, by message of src/protocol/client.proto: everything else
 * is left out when it is 0, false, "" or empty (docs/protocol.md "Frames"). Centrifugo's JSON encoder writes exactly
 * these unconditionally, and clients read them without a default (`num_clients` of an empty channel is `0`, not
 * missing), so the encoders in codec.ts and the reply builders follow this table and `reply-schema.test.ts` checks
 * every reply type against it.
 */
export const JSON_ALWAYS_WRITTEN: Readonly<Record<string, readonly string[]>> = {
  ClientInfo: ['user', 'client'],
  PresenceResult: ['presence'],
  PresenceStatsResult: ['num_clients', 'num_users'],
  HistoryResult: ['publications', 'epoch', 'offset'],
};
