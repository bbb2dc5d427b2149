import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { JobQueue } from '../src/index.js';
import { runCli } from './helpers/run-cli.js';
import { spanRecord, type SpanRecord } from './helpers/span-records.js';
import { databaseForTests } from './helpers/queue-fixtures.js';

// A job enqueued inside an HTTP request, in this process, and handled by a worker in another: the
// handler's span must sit in the request's trace, under the enqueue's span; a retry starts a trace
// of its own linked to the enqueue; a failure is recorded on its span.

const WORKER = fileURLToPath(new URL('../../test/fixtures/traced-worker.mjs', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../../examples/with-opentelemetry.mjs', import.meta.url));
const LIBRARY_GUIDE = readFileSync(fileURLToPath(new URL('../../docs/library.md', import.meta.url)), 'utf8');

const exporter = new InMemorySpanExporter();
new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();
const tracer = trace.getTracer('app');

let queue: JobQueue;
let server: Server;
const db = databaseForTests(
  async (db) => {
    queue = await JobQueue.open(db.url);
    await queue.setup();
    // The application's endpoint: POST /<kind> enqueues a job of that kind inside the request's span.
    server = createServer((request, response) => {
      const incoming = propagation.extract(context.active(), request.headers);
      void tracer.startActiveSpan(`POST ${request.url}`, { kind: SpanKind.SERVER }, incoming, async (span) => {
        const id = await queue.enqueue({ kind: request.url!.slice(1), payload: { to: 'ada@example.com' } });
        span.end();
        response.end(String(id));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  },
  async () => {
    await db.admin.query(`DROP DATABASE IF EXISTS \`${db.name}_example\``);
    server?.close();
    await queue?.close();
  },
);

/** A client request in a span of its own, its context sent in the headers; the job id the endpoint answers. */
async function post(kind: string): Promise<{ id: number; traceId: string }> {
  return tracer.startActiveSpan(`signup ${kind}`, { kind: SpanKind.CLIENT }, async (span) => {
    const headers: Record<string, string> = {};
    propagation.inject(context.active(), headers);
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/${kind}`, { method: 'POST', headers });
    span.end();
    return { id: Number(await response.text()), traceId: span.spanContext().traceId };
  });
}

const produced = () => exporter.getFinishedSpans().map(spanRecord);
const one = (spans: SpanRecord[], what: string, where: (span: SpanRecord) => boolean): SpanRecord => {
  const found = spans.filter(where);
  assert.equal(found.length, 1, `one ${what}, found ${found.length}: ${JSON.stringify(spans.map((span) => span.name))}`);
  return found[0]!;
};
const processSpans = (spans: SpanRecord[], id: number) =>
  spans.filter((span) => span.kind === SpanKind.CONSUMER && span.attributes['messaging.message.id'] === String(id)).sort((a, b) => Number(a.attributes['messaging.jobq.attempt']) - Number(b.attributes['messaging.jobq.attempt']));

test('a job enqueued in an HTTP request and handled in another process: one trace from the request to the handler; a retry is linked', async () => {
  const email = await post('email');
  const flaky = await post('flaky');
  const batch = await queue.enqueueMany([{ kind: 'email' }, { kind: 'email' }, { kind: 'email' }]);
  const untraced = Number(/\(id (\d+)\)/.exec((await runCli(['enqueue', '--database-url', db.url, '--kind', 'email', '--payload', '{}'])).stdout)?.[1]);
  assert.ok(untraced > 0, 'jobq enqueue printed the job id');

  const here = produced();
  const request = one(here, 'request span', (span) => span.name === 'POST /email');
  const send = one(here, 'send span of the request', (span) => span.attributes['messaging.message.id'] === String(email.id));
  assert.equal(request.traceId, email.traceId, "the request span continues the client's trace");
  assert.deepEqual(
    { name: send.name, kind: send.kind, traceId: send.traceId, parent: send.parentSpanId },
    { name: 'send email', kind: SpanKind.PRODUCER, traceId: email.traceId, parent: request.spanId },
    'the enqueue is a producer span under the request span',
  );
  assert.deepEqual(send.attributes, {
    'messaging.system': 'jobq',
    'messaging.operation.type': 'send',
    'messaging.operation.name': 'send',
    'messaging.destination.name': 'email',
    'messaging.message.id': String(email.id),
    'server.address': send.attributes['server.address'],
    'server.port': send.attributes['server.port'],
  });
  const batchSend = one(here, 'send span of the batch', (span) => span.attributes['messaging.batch.message_count'] === 3);
  assert.equal(batchSend.parentSpanId, undefined, 'a batch enqueued outside any span starts a trace');

  // What the table holds: the enqueue span's context, W3C traceparent; nothing for the CLI's job.
  const stored = await db.rows<{ id: number; trace_context: string | null }>('SELECT id, trace_context FROM jobs ORDER BY id');
  const contextOf = (id: number) => stored.find((row) => Number(row.id) === id)?.trace_context;
  assert.deepEqual(JSON.parse(contextOf(email.id)!), { traceparent: `00-${email.traceId}-${send.spanId}-01` });
  assert.equal(contextOf(untraced), null, 'jobq enqueue, which does not trace, stores no context');

  const { stdout } = await promisify(execFile)(process.execPath, [WORKER], { env: { ...process.env, JOBQ_DATABASE_URL: db.url } });
  const there = JSON.parse(stdout) as SpanRecord[];
  const [handled, ...again] = processSpans(there, email.id);
  assert.deepEqual(again, [], 'the email job ran once');
  assert.deepEqual(
    { name: handled!.name, kind: handled!.kind, traceId: handled!.traceId, parent: handled!.parentSpanId, status: handled!.status.code },
    { name: 'process email', kind: SpanKind.CONSUMER, traceId: email.traceId, parent: send.spanId, status: SpanStatusCode.UNSET },
    "the handler's run is a consumer span in the request's trace, a child of the enqueue",
  );
  assert.equal(handled!.attributes['messaging.jobq.attempt'], 1);
  assert.equal(handled!.attributes['messaging.operation.type'], 'process');
  assert.equal(handled!.attributes['messaging.destination.name'], 'email');
  const own = one(there, "the handler's own span", (span) => span.name === 'render email' && span.traceId === email.traceId);
  assert.equal(own.parentSpanId, handled!.spanId, "the handler's own spans are children of its run");

  const flakySend = one(here, 'send span of the flaky job', (span) => span.attributes['messaging.message.id'] === String(flaky.id));
  const [first, retry, ...more] = processSpans(there, flaky.id);
  assert.deepEqual(more, [], 'the flaky job ran twice');
  assert.deepEqual(
    { traceId: first!.traceId, parent: first!.parentSpanId, status: first!.status, errorType: first!.attributes['error.type'], events: first!.events },
    { traceId: flaky.traceId, parent: flakySend.spanId, status: { code: SpanStatusCode.ERROR, message: 'the first run fails' }, errorType: 'TypeError', events: ['exception'] },
    'the failed first run is in the request trace, its error recorded',
  );
  assert.notEqual(retry!.traceId, flaky.traceId, 'the retry starts a trace of its own');
  assert.deepEqual(
    { attempt: retry!.attributes['messaging.jobq.attempt'], parent: retry!.parentSpanId, links: retry!.links, status: retry!.status.code },
    { attempt: 2, parent: undefined, links: [{ traceId: flaky.traceId, spanId: flakySend.spanId }], status: SpanStatusCode.UNSET },
    'the retry is linked to the enqueue',
  );

  for (let id = batch.firstId!; id <= batch.lastId!; id++) {
    const [run] = processSpans(there, id);
    assert.equal(run?.parentSpanId, batchSend.spanId, `job ${id} of the batch runs under the batch's enqueue`);
  }
  const [cliJob] = processSpans(there, untraced);
  assert.deepEqual({ parent: cliJob?.parentSpanId, links: cliJob?.links }, { parent: undefined, links: [] }, 'a job enqueued without a trace runs in a trace of its own');
});

test('examples/with-opentelemetry.mjs, quoted in the library guide, prints the request, the enqueue and the handler in one trace', async () => {
  assert.ok(LIBRARY_GUIDE.includes(`\`\`\`js\n${readFileSync(EXAMPLE, 'utf8')}\`\`\``), 'docs/library.md quotes the example verbatim');
  const { stdout } = await promisify(execFile)(process.execPath, [EXAMPLE], { env: { ...process.env, JOBQ_DATABASE_URL: `${db.url}_example` } });
  const spans = stdout.trimEnd().split('\n').map((line) => {
    const [, name, traceId, spanId, parent] = /^(.+?) +trace (\w{8})  span (\w{8})  parent (\w{8}|-)$/.exec(line) ?? [];
    return { name, traceId, spanId, parent };
  });
  assert.deepEqual(spans.map((span) => span.name), ['send email', 'POST /orders', 'process email'], stdout);
  const [send, request, handled] = spans;
  assert.deepEqual(
    [send!.parent, handled!.parent, new Set(spans.map((span) => span.traceId)).size],
    [request!.spanId, send!.spanId, 1],
    stdout,
  );
});
