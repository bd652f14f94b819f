/**
 * What Parley knows about each kind of connector: how its outbound calls authenticate and which base URL it uses
 * when none is given. Adding a kind = adding an entry here (the CLI, the API schemas and the outbound client read
 * this registry).
 */
export interface ConnectorType {
  name: string;
  summary: string;
  /** Used when a connector is created without a URL; absent means a URL is required. */
  defaultUrl?: string;
  /** Headers that carry `apiKey` on an outbound call. */
  authenticate(apiKey: string): Record<string, string>;
}

/** RFC 6750 §2.1: the key travels as a bearer credential in the Authorization header. */
const bearer = (apiKey: string): Record<string, string> => ({ authorization: `Bearer ${apiKey}` });

const registry = new Map<string, ConnectorType>();

export function registerConnectorType(type: ConnectorType): void {
  registry.set(type.name, type);
}

registerConnectorType({
  name: 'webhook',
  summary: 'your own HTTP endpoint (a webhook bot); Parley POSTs to the URL',
  authenticate: bearer,
});

registerConnectorType({
  name: 'openai',
  summary: 'an OpenAI-compatible API; the URL is its base URL (…/v1)',
  defaultUrl: 'https://api.openai.com/v1',
  authenticate: bearer,
});

export const connectorType = (name: string): ConnectorType | undefined => registry.get(name);

export const connectorTypeNames = (): string[] => [...registry.keys()];
