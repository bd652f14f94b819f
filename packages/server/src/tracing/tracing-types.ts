import type { Attributes, Span, SpanKind } from '@opentelemetry/api';

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
