import type {
  ConnectorView as ConnectorWireView,
  KeyRotationView as KeyRotationWireView,
} from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import { connectorTypeNames } from './connector-types.ts';
import { API_KEY_MAX, API_KEY_PATTERN } from './connector-validation.ts';
import type { Connector, KeyRotation } from './connectors.service.ts';

/** RFC 9457 problem body as every non-OAuth error is sent (extension members vary by code). */
export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable error code (docs/errors.md)' }),
    instance: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const ConnectorIdParams = Type.Object({
  connector_id: Type.String({
    description: 'Connector id (UUID), as shown in the portal and in the listing',
  }),
});

export const ConnectorView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  type: Type.String({ enum: connectorTypeNames() }),
  url: Type.String({ description: 'Base URL outbound calls go to' }),
  api_key_set: Type.Boolean({ description: 'Whether a key is stored; the key itself is write-only' }),
  key_version: Type.Integer({ minimum: 0, description: '0 = never set; +1 on every rotation' }),
  rotated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

/** The listing shape shared by the CLI and `GET /integrations/v1/connectors`: metadata only, never the key. */
export const connectorView = (c: Connector): ConnectorWireView => ({
  id: c.id,
  name: c.name,
  type: c.type,
  url: c.url,
  api_key_set: c.apiKeySet,
  key_version: c.keyVersion,
  rotated_at: c.rotatedAt,
  created_at: c.createdAt,
});

export const ConnectorList = Type.Object({ connectors: Type.Array(ConnectorView) });

export const RotateKeyBody = Type.Object(
  {
    api_key: Type.String({
      minLength: 1,
      maxLength: API_KEY_MAX,
      pattern: API_KEY_PATTERN,
      writeOnly: true,
      description: `The new key: 1 to ${API_KEY_MAX} visible ASCII characters (no whitespace or control characters). Never returned.`,
    }),
  },
  { additionalProperties: false },
);

export const KeyRotationView = Type.Object({
  connector_id: Type.String({ format: 'uuid' }),
  key_version: Type.Integer({ minimum: 1, description: 'Version now current; also sent as the ETag' }),
  rotated_at: Type.String({ format: 'date-time', description: 'When the current key was set' }),
  changed: Type.Boolean({
    description: 'False when the key sent is already the current key (nothing was changed)',
  }),
});

/** The answer of a key rotation, shared by the API and the portal: versions and times only, never the key. */
export const keyRotationView = (r: KeyRotation): KeyRotationWireView => ({
  connector_id: r.connectorId,
  key_version: r.keyVersion,
  rotated_at: r.rotatedAt,
  changed: r.changed,
});

export const CheckView = Type.Object({
  ok: Type.Boolean({ description: 'True for a 2xx answer' }),
  status: Type.Integer({ description: 'HTTP status of the answer; 0 when none arrived' }),
  latency_ms: Type.Integer({ minimum: 0 }),
  key_version: Type.Integer({ minimum: 0, description: 'Version of the key that was sent' }),
  error: Type.Optional(Type.String({ description: 'Why no answer arrived (docs/errors.md)' })),
  detail: Type.Optional(Type.String()),
});
