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
import { markFailed } from './span-status.ts';
import type { Carrier, SpanOptions, Tracing } from './tracing-types.ts';

/** Tracing switched on (tracing.ts `createTracing` loads this module only then): spans exported over OTLP/HTTP. */
export class OtelTracing implements Tracing {
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
