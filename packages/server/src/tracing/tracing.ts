import { type Attributes, type Span, SpanKind } from '@opentelemetry/api';
import type { Config } from '../config/schema.ts';

export { markFailed } from './span-status.ts';
export { SpanKind };

/** Headers as the propagator reads and writes them (incoming `IncomingHttpHeaders`, outgoing plain records). */
export type Carrier = Record<string, string | string[] | undefined>;

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
}

/**
 * OpenTelemetry traces (docs/operations.md "Traces"), off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set. Spans are
 * made by hand at the places that matter — HTTP requests, token grants, store queries, realtime publish → reply,
 * outbound connector calls — rather than by auto-instrumentation, which cannot hook ESM modules loaded through tsx.
 * The tracer, context manager and propagator belong to this object (built once in context.ts); nothing is
 * registered globally. While tracing is off every method is a plain pass-through, so hot paths pay nothing.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** Runs `fn` in a new span, a child of the active one; the span ends when `fn` settles (an error marks it). */
  inSpan<T>(name: string, options: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T>;
  /**
   * Records a span that already ended (a store statement whose duration is known afterwards). `attributes` is read
   * only when the span is recorded: it runs for every statement, and most have no span to belong to.
   */
  recordSpan(
    name: string,
    startedAt: number,
    endedAt: number,
    attributes: () => Attributes,
    failed: boolean,
  ): void;
  /** Starts a server span continuing the W3C `traceparent` of `headers` (RFC-less: W3C Trace Context §3). */
  startServerSpan(name: string, headers: Carrier, attributes: Attributes): Span | undefined;
  /** Runs `fn` with `span` active, so spans started inside (and across its awaits) are its children. */
  withSpan<T>(span: Span | undefined, fn: () => T): T;
  /** Writes `traceparent` (and `tracestate`) of the active span into outgoing headers. */
  inject(headers: Carrier): void;
  /** Exports what is still buffered and stops. */
  shutdown(): Promise<void>;
}

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
