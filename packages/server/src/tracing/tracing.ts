import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Config } from '../config/schema.ts';

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

export function createTracing(config: Config['otel']): Tracing {
  const url =
    config.tracesEndpoint ?? (config.endpoint ? `${config.endpoint.replace(/\/+$/, '')}/v1/traces` : '');
  return url ? new OtelTracing(url, config) : DISABLED;
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

class OtelTracing implements Tracing {
  readonly enabled = true;
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly contexts = new AsyncLocalStorageContextManager().enable();
  private readonly propagator = new W3CTraceContextPropagator();

  constructor(url: string, config: Config['otel']) {
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.serviceName }),
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url }), {
          scheduledDelayMillis: config.exportDelayMs,
        }),
      ],
    });
    this.tracer = this.provider.getTracer('parley');
  }

  async inSpan<T>(
    name: string,
    options: SpanOptions,
    fn: (span: Span | undefined) => Promise<T>,
  ): Promise<T> {
    const span = this.tracer.startSpan(name, options, this.contexts.active());
    try {
      return await this.contexts.with(trace.setSpan(this.contexts.active(), span), () => fn(span));
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  recordSpan(
    name: string,
    startedAt: number,
    endedAt: number,
    attributes: () => Attributes,
    failed: boolean,
  ): void {
    const active = this.contexts.active();
    // Only inside a traced operation: a statement on its own (a timer's) would be a trace of one span.
    if (trace.getSpan(active) === undefined) return;
    const span = this.tracer.startSpan(
      name,
      { kind: SpanKind.CLIENT, attributes: attributes(), startTime: startedAt },
      active,
    );
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(endedAt);
  }

  startServerSpan(name: string, headers: Carrier, attributes: Attributes): Span {
    const parent: Context = this.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    return this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  }

  withSpan<T>(span: Span | undefined, fn: () => T): T {
    if (span === undefined) return fn();
    return this.contexts.with(trace.setSpan(this.contexts.active(), span), fn);
  }

  inject(headers: Carrier): void {
    this.propagator.inject(this.contexts.active(), headers, defaultTextMapSetter);
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
    this.contexts.disable();
  }
}

/** An error on the span: its type only, never its message (which may quote input). */
export function markFailed(span: Span | undefined, error: unknown): void {
  if (span === undefined) return;
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute(
    'error.type',
    error instanceof Error ? ((error as { code?: string }).code ?? error.name) : 'error',
  );
}
