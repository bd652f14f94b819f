import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/**
 * The client protocol schema (src/protocol/client.proto), loaded once: the Protobuf codec encodes and decodes with
 * its types, and the reply tests check JSON frames against it field by field. The production build copies the file
 * next to its bundle (packages/server/src/build/build.ts), where this same relative URL finds it.
 */
export const CLIENT_PROTO_PATH = fileURLToPath(new URL('./client.proto', import.meta.url));

// keepCase: field names stay snake_case, as in the JSON protocol, so one object shape serves both formats.
const root = new protobuf.Root().loadSync(CLIENT_PROTO_PATH, { keepCase: true }).resolveAll();

/** A message type of the schema by its short name (`Reply`, `Command`, `Publication`…). */
export function protocolType(name: string): protobuf.Type {
  return root.lookupType(`centrifugal.centrifuge.protocol.${name}`);
}
