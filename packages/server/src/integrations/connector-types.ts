/**
 * What Parley knows about each kind of connector: how its outbound calls authenticate and which base URL it uses
 * when none is given. Adding a kind = adding an entry to CONNECTOR_TYPES (the CLI, the API schemas and the outbound
 * client read this table).
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

/** Every kind of connector, in one table. */
export const CONNECTOR_TYPES: readonly ConnectorType[] = [
  {
    name: 'webhook',
    summary: 'your own HTTP endpoint (a webhook bot); Parley POSTs to the URL',
    authenticate: bearer,
  },
  {
    name: 'openai',
    summary: 'an OpenAI-compatible API; the URL is its base URL (…/v1)',
    defaultUrl: 'https://api.openai.com/v1',
    authenticate: bearer,
  },
  {
    name: 'http',
    summary: "an HTTP API of your own that digital employees' actions call; the URL is its base URL",
    authenticate: bearer,
  },
];

export const connectorType = (name: string): ConnectorType | undefined =>
  CONNECTOR_TYPES.find((t) => t.name === name);

export const connectorTypeNames = (): string[] => CONNECTOR_TYPES.map((t) => t.name);
