import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { JobqError } from '../errors.js';
import type { JobQueue } from '../job-queue.js';
import { parseRate, RATE_FORMAT } from '../config/rate.js';
import { checkKind } from '../queue/new-jobs.js';
import { checkLimitKind } from '../queue/limits.js';
import type { KindLimit } from '../queue/types.js';
import type { JobSearch } from '../queue/job-search.js';
import type { Access } from './access.js';
import { QueueMetrics } from './metrics.js';
import { loginPage, dashboardPage } from './pages.js';
import { HttpError, sendJson, setSecurityHeaders } from './http.js';
import type { StatsSampler } from './sampler.js';

// Plain node:http, not a framework: a dozen routes, JSON in and out, and every security header
// and limit in sight in this one file; a framework would add more code than it saves here.

const MAX_BODY_BYTES = 16 * 1024;
const MAX_IDS = 1000;
/** The job search's fields that are text as given (GET /api/jobs). */
const SEARCH_TEXT_FIELDS = ['key', 'kind', 'group', 'status'] as const;

const PUBLIC = (name: string) => fileURLToPath(new URL(`../../../public/${name}`, import.meta.url));
const require = createRequire(import.meta.url);
/** Static files, from the package itself and from node_modules: nothing comes from a CDN. */
const ASSETS: Record<string, { file: () => string; type: string }> = {
  '/assets/dashboard.js': { file: () => PUBLIC('dashboard.js'), type: 'text/javascript; charset=utf-8' },
  '/assets/dashboard.css': { file: () => PUBLIC('dashboard.css'), type: 'text/css; charset=utf-8' },
  '/assets/uplot.js': { file: () => require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  '/assets/uplot.css': { file: () => require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

export interface DashboardContext {
  queue: JobQueue;
  access: Access;
  sampler: StatsSampler;
  /** Where the queue is, without the password, for the page's heading. */
  where: string;
}

export function createDashboardServer(context: DashboardContext): Server {
  const metrics = new QueueMetrics(context.queue);
  return createServer((request, response) => {
    setSecurityHeaders(response);
    handle(context, metrics, request, response).catch((error: unknown) => {
      if (error instanceof HttpError) return sendJson(response, error.status, { error: error.message });
      if (error instanceof JobqError) return sendJson(response, 400, { error: error.message });
      sendJson(response, 500, { error: 'the dashboard could not read the queue; see its log' });
      process.stderr.write(`jobq dashboard: ${(error as Error).message}\n`);
    });
  });
}

async function handle(context: DashboardContext, metrics: QueueMetrics, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { access, queue, sampler } = context;
  const url = new URL(request.url ?? '/', 'http://dashboard');
  const route = `${request.method} ${url.pathname}`;
  if (!access.servesHost(request)) throw new HttpError(421, `this dashboard answers to ${access.hostNamesText} only, not ${JSON.stringify(request.headers.host ?? '')}`);
  if (request.method === 'POST' && !access.originMatches(request)) throw new HttpError(403, 'a POST from another origin is refused; use the dashboard\'s own page');
  if (route === 'GET /login') return sendHtml(response, 200, loginPage(access.csrf));
  if (route === 'POST /login') return login(access, request, response);
  const asset = request.method === 'GET' ? ASSETS[url.pathname] : undefined;
  if (asset !== undefined) return sendFile(response, asset.file(), asset.type);
  if (!access.allows(request)) {
    if (route === 'GET /') return sendHtml(response, 200, loginPage(access.csrf));
    throw new HttpError(401, 'send the token: Authorization: Bearer <token>, or log in on the page');
  }
  if (request.method === 'POST' && !access.csrfMatches(header(request, 'x-csrf-token'))) {
    throw new HttpError(403, 'missing or wrong X-CSRF-Token; use the page, which sends it');
  }
  switch (route) {
    case 'GET /':
      return sendHtml(response, 200, dashboardPage(access.csrf, context.where));
    case 'GET /metrics':
      response.writeHead(200, { 'Content-Type': metrics.contentType });
      return void response.end(await metrics.render());
    case 'GET /api/stats': {
      const latest = await sampler.forViewer();
      return sendJson(response, 200, { at: latest?.at, stats: latest?.stats });
    }
    case 'GET /api/throughput':
      return sendJson(response, 200, { points: sampler.rates });
    case 'GET /api/failed': {
      const offset = whole(url.searchParams.get('offset') ?? '0', 'offset', 0, 1e9);
      const limit = whole(url.searchParams.get('limit') ?? '20', 'limit', 1, 500);
      return sendJson(response, 200, { offset, limit, jobs: await queue.failedJobs({ offset, limit }) });
    }
    case 'GET /api/jobs': {
      const param = (name: string) => url.searchParams.get(name) ?? undefined;
      const id = param('id');
      // The text fields as given (findJobs checks them, the status among them); a field left out is no filter.
      const given = SEARCH_TEXT_FIELDS.flatMap((name) => (url.searchParams.has(name) ? [[name, url.searchParams.get(name)]] : []));
      const search: JobSearch = {
        ...(Object.fromEntries(given) as Pick<JobSearch, (typeof SEARCH_TEXT_FIELDS)[number]>),
        ...(id !== undefined && { id: whole(id, 'id', 1, Number.MAX_SAFE_INTEGER) }),
        offset: whole(param('offset') ?? '0', 'offset', 0, 10_000),
        limit: whole(param('limit') ?? '20', 'limit', 1, 500),
      };
      return sendJson(response, 200, { jobs: await queue.findJobs(search) });
    }
    case 'GET /api/job': {
      const job = await queue.job(whole(url.searchParams.get('id') ?? '', 'id', 1, Number.MAX_SAFE_INTEGER));
      if (job === undefined) throw new HttpError(404, 'no such job: never queued, or finished and deleted');
      return sendJson(response, 200, { job });
    }
    case 'POST /api/run-now': {
      const delayed = await queue.runNow(ids((await readJson(request)).ids));
      return afterAction(context, response, { delayed });
    }
    case 'POST /api/requeue': {
      const body = await readJson(request);
      const count = await queue.requeueFailed(body.all === true ? undefined : ids(body.ids));
      return afterAction(context, response, { requeued: count });
    }
    case 'POST /api/cancel': {
      const result = await queue.cancel(ids((await readJson(request)).ids));
      return afterAction(context, response, result);
    }
    case 'POST /api/pause':
    case 'POST /api/resume': {
      const kind = checkKind((await readJson(request)).kind, 'kind');
      await (route === 'POST /api/pause' ? queue.pause(kind) : queue.resume(kind));
      return afterAction(context, response, { pausedKinds: await queue.pausedKinds() });
    }
    case 'POST /api/limit': {
      const body = await readJson(request);
      await queue.setLimit(checkLimitKind(body.kind, 'kind'), limitOf(body));
      return afterAction(context, response, { limits: await queue.limits() });
    }
    case 'POST /api/limit/remove': {
      await queue.removeLimit(checkLimitKind((await readJson(request)).kind, 'kind'));
      return afterAction(context, response, { limits: await queue.limits() });
    }
    default:
      throw new HttpError(404, `no such page: ${request.method} ${url.pathname}`);
  }
}

async function afterAction(context: DashboardContext, response: ServerResponse, result: object): Promise<void> {
  await context.sampler.sampleAfterAction();
  sendJson(response, 200, result);
}

async function login(access: Access, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const form = new URLSearchParams(await readBody(request));
  if (!access.csrfMatches(form.get('csrf') ?? undefined)) return sendHtml(response, 403, loginPage(access.csrf, 'The form was out of date; try again.'));
  if (!access.needsLogin) return redirect(response, '/');
  if (!access.acceptsLogin(form.get('token') ?? '')) return sendHtml(response, 401, loginPage(access.csrf, 'Wrong token.'));
  response.setHeader('Set-Cookie', access.sessionCookie());
  redirect(response, '/');
}

/**
 * A kind's limits as the page sends them: numbers as they are (setLimit checks them), rates as on
 * the command line (`100/1s`); any other field is left for setLimit to refuse.
 */
function limitOf(body: Record<string, unknown>): KindLimit {
  const { kind: _kind, rate, groupRate, ...rest } = body;
  const parsed = (name: string, value: unknown) => {
    const result = typeof value === 'string' ? parseRate(value) : undefined;
    if (result === undefined) throw new HttpError(400, `${name} must be ${RATE_FORMAT}, not ${JSON.stringify(value)}`);
    return result;
  };
  return {
    ...(rest as KindLimit),
    ...(rate !== undefined && { rate: parsed('rate', rate) }),
    ...(groupRate !== undefined && { groupRate: parsed('groupRate', groupRate) }),
  };
}

function ids(value: unknown): number[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_IDS || !value.every((id) => Number.isSafeInteger(id) && id > 0)) {
    throw new HttpError(400, `ids must be a list of 1 to ${MAX_IDS} job ids (whole numbers from 1)`);
  }
  return value as number[];
}

function whole(text: string, name: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) throw new HttpError(400, `${name} must be a whole number from ${min} to ${max}`);
  return n;
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readBody(request);
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new HttpError(400, 'the body must be a JSON object');
}

/**
 * The request body, at most MAX_BODY_BYTES; a larger one is answered 413 once it has been read
 * (and thrown away: the client then gets the answer, not a reset), or, past a megabyte, cut off.
 */
function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else if (size > 1024 * 1024) request.destroy();
    });
    request.on('end', () => (size > MAX_BODY_BYTES ? reject(new HttpError(413, `the body is over ${MAX_BODY_BYTES} bytes`)) : resolve(Buffer.concat(chunks).toString('utf8'))));
    request.on('error', reject);
  });
}

function sendHtml(response: ServerResponse, status: number, html: string): void {
  response.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8' });
  response.end(html);
}

async function sendFile(response: ServerResponse, file: string, type: string): Promise<void> {
  const body = await readFile(file);
  response.writeHead(200, { 'Content-Type': type });
  response.end(body);
}

function redirect(response: ServerResponse, location: string): void {
  response.writeHead(303, { Location: location });
  response.end();
}
