import type * as OtelApi from '@opentelemetry/api';
import type { ServerAddress } from '../config/database-url.js';

// OpenTelemetry spans for enqueues and handler runs, on @opentelemetry/api when the application
// has it (an optional peer). Without it jobq loads nothing more and creates no span; with it but
// no SDK registered, the API's no-op tracer makes spans that record nothing and a propagator that
// writes nothing, so no trace context is stored.
//
// Attributes follow OpenTelemetry's messaging conventions: the system is "jobq", the destination a
// job's kind, the message id its id. A job's trace context is the propagation carrier (W3C
// `traceparent` and `tracestate` with the SDK's default propagator) as JSON in its own column.

type Api = typeof OtelApi;

const SYSTEM = 'jobq';
const TRACER_NAME = 'jobq-mysql';
/** The trace_context column: printable ASCII, as HTTP headers are, up to this many characters. */
export const MAX_TRACE_CONTEXT_LENGTH = 1024;
const STORABLE = /^[\x20-\x7e]+$/;

/** A job run as the consumer span sees it. */
export interface TracedRun {
  id: number;
  kind: string | null;
  /** This run's number among its handler's runs (1 at first). */
  attempts: number;
  /** Leases of the job that ran out before this run. */
  leaseExpiries: number;
  /** The carrier stored by the job's enqueue, or null. */
  traceContext: Readonly<Record<string, string>> | null;
}

/** What an enqueue sends, for its producer span. */
export interface TracedSend {
  /** The jobs' kinds (null: no kind). */
  kinds: ReadonlyArray<string | null>;
  server: ServerAddress | undefined;
}

let loading: Promise<JobSpans | undefined> | undefined;

/**
 * jobq's spans in this process, or undefined when the application does not have
 * @opentelemetry/api: imported once, by the first enqueue or worker.
 */
export function loadJobSpans(): Promise<JobSpans | undefined> {
  loading ??= import('@opentelemetry/api').then(
    (api) => new JobSpans(api),
    () => undefined,
  );
  return loading;
}

export class JobSpans {
  private readonly tracer: OtelApi.Tracer;

  constructor(private readonly api: Api) {
    this.tracer = api.trace.getTracer(TRACER_NAME);
  }

  /**
   * Whether the application has registered a tracer provider (an SDK). Until it does, the API's
   * spans record nothing and carry no context, and jobq makes none: a span per job cost a worker
   * with a no-op handler a tenth of its throughput (bench-results/tracing-noop-spans-ab.json).
   */
  get enabled(): boolean {
    const provider = this.api.trace.getTracerProvider();
    return !(provider instanceof this.api.ProxyTracerProvider) || provider.getDelegateTracer(TRACER_NAME) !== undefined;
  }

  /**
   * Runs `insert` in a producer span (a child of the active span, the caller's request say),
   * giving it the span's trace context as JSON text, or null when there is none to store.
   * `idOf` names the job when one was sent.
   */
  async send<T>(jobs: TracedSend, insert: (traceContext: string | null) => Promise<T>, idOf: (result: T) => number | null): Promise<T> {
    const { api } = this;
    const destination = commonKind(jobs.kinds);
    const span = this.tracer.startSpan(destination === null ? 'send' : `send ${destination}`, {
      kind: api.SpanKind.PRODUCER,
      attributes: {
        'messaging.system': SYSTEM,
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'send',
        ...(destination !== null && { 'messaging.destination.name': destination }),
        ...(jobs.kinds.length !== 1 && { 'messaging.batch.message_count': jobs.kinds.length }),
        ...serverAttributes(jobs.server),
      },
    });
    const active = api.trace.setSpan(api.context.active(), span);
    const carrier: Record<string, string> = {};
    api.propagation.inject(active, carrier);
    const text = JSON.stringify(carrier);
    // A carrier that does not fit (a large tracestate or baggage) is not stored: the job runs in a trace of its own.
    const traceContext = text !== '{}' && text.length <= MAX_TRACE_CONTEXT_LENGTH && STORABLE.test(text) ? text : null;
    try {
      const result = await api.context.with(active, () => insert(traceContext));
      const id = idOf(result);
      if (id !== null && jobs.kinds.length === 1) span.setAttribute('messaging.message.id', String(id));
      return result;
    } catch (error) {
      this.recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  /**
   * Runs a job's handler in a consumer span, active while it runs (the handler's own spans are its
   * children). The job's first run is a child of its enqueue's span, in the request's trace; a
   * later run (after a failure, or a lease that ran out) starts a trace of its own, linked to it.
   */
  async process<T>(job: TracedRun, server: ServerAddress | undefined, run: () => Promise<T>): Promise<T> {
    const { api } = this;
    const sent = job.traceContext === null ? undefined : api.propagation.extract(api.ROOT_CONTEXT, job.traceContext);
    const sentSpan = sent === undefined ? undefined : api.trace.getSpanContext(sent);
    const firstRun = job.attempts <= 1 && job.leaseExpiries === 0;
    const parent = sent !== undefined && firstRun ? sent : api.context.active();
    const span = this.tracer.startSpan(
      job.kind === null ? 'process' : `process ${job.kind}`,
      {
        kind: api.SpanKind.CONSUMER,
        attributes: {
          'messaging.system': SYSTEM,
          'messaging.operation.type': 'process',
          'messaging.operation.name': 'process',
          ...(job.kind !== null && { 'messaging.destination.name': job.kind }),
          'messaging.message.id': String(job.id),
          'messaging.jobq.attempt': job.attempts,
          ...(job.leaseExpiries > 0 && { 'messaging.jobq.lease_expiries': job.leaseExpiries }),
          ...serverAttributes(server),
        },
        ...(!firstRun && sentSpan !== undefined && { root: true, links: [{ context: sentSpan }] }),
      },
      parent,
    );
    try {
      return await api.context.with(api.trace.setSpan(parent, span), run);
    } catch (error) {
      this.recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  private recordError(span: OtelApi.Span, error: unknown): void {
    const failure = error instanceof Error ? error : new Error(String(error));
    span.recordException(failure);
    span.setAttribute('error.type', failure.name === 'Error' ? (failure.constructor?.name ?? 'Error') : failure.name);
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: failure.message });
  }
}

/** The kind all these jobs share, or null when they differ or have none. */
function commonKind(kinds: ReadonlyArray<string | null>): string | null {
  const first = kinds[0] ?? null;
  return kinds.every((kind) => kind === first) ? first : null;
}

function serverAttributes(server: ServerAddress | undefined): Record<string, string | number> {
  return server === undefined ? {} : { 'server.address': server.host, 'server.port': server.port };
}
