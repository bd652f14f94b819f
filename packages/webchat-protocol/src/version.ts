/**
 * The protocol version every envelope and SendMessage carries (spec "Versioning"): clients ignore envelopes with
 * a version they do not know, servers refuse SendMessages with one they do not speak.
 */
export const ENVELOPE_VERSION = 1 as const;
