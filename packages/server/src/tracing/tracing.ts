import { SpanKind } from '@opentelemetry/api';
import type { Config } from '../config/schema.ts';
import type { Tracing } from './tracing-types.ts';

export { markFailed } from './span-status.ts';
export type { Carrier, SpanOptions, Tracing } from './tracing-types.ts';
export { SpanKind };

/**
 * Tracing as configured. The OpenTelemetry SDK and its OTLP exporter (otel-tracing.ts) are loaded only when an
 * endpoint is set: a process that traces nothing (the default, and every CLI command) never loads them.
 */
export async function createTracing(config: Config['otel']): Promise<Tracing> {
  const url =
    config.tracesEndpoint ?? (config.endpoint ? `${config.endpoint.replace(/\/+$/, '')}/v1/traces` : '');
  if (!url) return DISABLED;
  const { OtelTracing } = await import('./otel-tracing.ts');
  return new OtelTracing(url, config);
}

/** Tracing switched off: every method a pass-through (also the default of parts built without tracing). */
export const DISABLED: Tracing = {
  enabled: false,
  inSpan: (_name, _options, fn) => fn(undefined),
  recordSpan: () => {},
  startServerSpan: () => undefined,
  withSpan: (_span, fn) => fn(),
  inject: () => {},
  shutdown: async () => {},
};
