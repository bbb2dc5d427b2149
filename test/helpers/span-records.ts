import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** A finished span as the tracing tests compare them, across processes: plain JSON. */
export interface SpanRecord {
  name: string;
  /** SpanKind: 1 server, 3 producer, 4 consumer, 0 internal. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  links: Array<{ traceId: string; spanId: string }>;
  attributes: Record<string, unknown>;
  /** SpanStatusCode: 0 unset, 2 error. */
  status: { code: number; message?: string };
  events: string[];
}

export function spanRecord(span: ReadableSpan): SpanRecord {
  const { traceId, spanId } = span.spanContext();
  return {
    name: span.name,
    kind: span.kind,
    traceId,
    spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    links: span.links.map((link) => ({ traceId: link.context.traceId, spanId: link.context.spanId })),
    attributes: { ...span.attributes },
    status: { ...span.status },
    events: span.events.map((event) => event.name),
  };
}
