import { type Span, SpanStatusCode } from '@opentelemetry/api';

/** An error on the span: its type only, never its message (which may quote input). */
export function markFailed(span: Span | undefined, error: unknown): void {
  if (span === undefined) return;
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute(
    'error.type',
    error instanceof Error ? ((error as { code?: string }).code ?? error.name) : 'error',
  );
}
