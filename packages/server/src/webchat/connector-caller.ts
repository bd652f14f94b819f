import type { AppContext } from '../context.ts';
import type { ConnectorCaller } from '../digital-employees/connector-ports.ts';
import { ResponderMisconfiguredError } from '../digital-employees/responders/responder-errors.ts';

/**
 * The outbound connector client webhook and openai responders call through (src/integrations/, which reads the
 * connector's current key at call time). Until a context provides one, those responders fail with a typed
 * `responder_misconfigured` error — which the conversation engine turns into an error block — while builtin
 * digital employees, which call nothing, work.
 */
export function connectorCallerOf(ctx: AppContext): ConnectorCaller {
  const provided = (ctx as AppContext & { connectorCaller?: ConnectorCaller }).connectorCaller;
  if (provided) return provided;
  const unavailable = async (): Promise<never> => {
    throw new ResponderMisconfiguredError('no connector client is configured on this server');
  };
  return { fetch: unavailable, credentials: unavailable };
}
