import { trace } from '@opentelemetry/api';
import { NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { JobQueue } from 'jobq-mysql';

// The application's tracing, set up as for the rest of its code; here each span is printed on
// one line when it ends, where an exporter would send it to your tracing tool.
const short = (id) => id?.slice(0, 8) ?? '-';
const printer = {
  export(spans, done) {
    for (const span of spans) {
      const { traceId, spanId } = span.spanContext();
      console.log(`${span.name.padEnd(14)} trace ${short(traceId)}  span ${short(spanId)}  parent ${short(span.parentSpanContext?.spanId)}`);
    }
    done({ code: 0 });
  },
  shutdown: async () => {},
};
new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(printer)] }).register();

const queue = await JobQueue.open({ createDatabase: true });
await queue.setup();

// A request enqueues a job; a worker (here in the same process) runs it in the request's trace.
await trace.getTracer('shop').startActiveSpan('POST /orders', async (span) => {
  await queue.enqueue({ kind: 'email', payload: { orderId: 1 } });
  span.end();
});
const worker = queue.work({ email: async () => {} }, { once: true });
await worker.finished;
await queue.close();
