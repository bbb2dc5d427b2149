import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, test } from 'node:test';
import { JobQueue } from '../src/index.js';
import { runCli, startCli, type CliRun } from './helpers/run-cli.js';
import { createTestDatabase, SERVER_URL, type TestDatabase } from './helpers/test-database.js';

// The dashboard connects as a user with a password: it must never show up anywhere.
let db: TestDatabase;
let queue: JobQueue;
let dashboard: CliRun;
let base: string;
const token = randomBytes(24).toString('hex');
const user = `jobq_dash_${randomBytes(4).toString('hex')}`;
const password = `s3cret-${randomBytes(8).toString('hex')}`;
let url: string;

before(async () => {
  db = await createTestDatabase();
  queue = await JobQueue.open(db.url);
  await queue.setup();
  await db.admin.query('CREATE USER ?@? IDENTIFIED BY ?', [user, '%', password]);
  await db.admin.query(`GRANT ALL ON \`${db.name}\`.* TO ?@?`, [user, '%']);
  url = `mysql://${user}:${password}@${new URL(SERVER_URL).host}/${db.name}`;
  dashboard = startCli(['dashboard', '--port', '0', '--host', '127.0.0.1', '--database-url', url], { JOBQ_DASHBOARD_TOKEN: token });
  base = (await dashboard.waitFor(/^jobq dashboard on (http:\/\/127\.0\.0\.1:\d+) /m))[1]!;
});
after(async () => {
  dashboard.kill('SIGINT');
  const result = await dashboard.done;
  assert.equal(result.code, 0, result.stderr);
  assert.ok(!`${result.stdout}${result.stderr}`.includes(password), 'no log line holds the password');
  await queue.close();
  await db.admin.query('DROP USER IF EXISTS ?@?', [user, '%']);
  await db.drop();
});

const bearer = { Authorization: `Bearer ${token}` };
const csrfOf = async () => /<meta name="csrf-token" content="([^"]+)">/.exec(await (await fetch(`${base}/`, { headers: bearer })).text())![1]!;

test('--host 0.0.0.0 without a token: refused with one line, exit code 2', async () => {
  const result = await runCli(['dashboard', '--host', '0.0.0.0', '--port', '0', '--database-url', db.url]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /^jobq: other machines can reach 0\.0\.0\.0: listening there needs --token \(or JOBQ_DASHBOARD_TOKEN\), since the queue's data is shown \(the default, 127\.0\.0\.1, needs none\)\n$/);
  const short = await runCli(['dashboard', '--token', 'short', '--port', '0', '--database-url', db.url]);
  assert.equal(short.code, 2);
  assert.match(short.stderr, /^jobq: a dashboard token must be at least 16 characters/);
});

test('with a token: no token is 401 (page: the login form), a POST without the anti-CSRF value is 403, and nothing changes', async () => {
  assert.ok(base.startsWith('http://127.0.0.1:'), `dashboard address: ${base}`);
  const failed = await queue.enqueue({ kind: 'email', payload: { to: 'ann' } });
  await db.admin.query(`UPDATE \`${db.name}\`.jobs SET status = 'failed', last_error = 'smtp down' WHERE id = ?`, [failed]);

  for (const path of ['/api/stats', '/api/failed', '/metrics', '/api/throughput']) {
    assert.equal((await fetch(`${base}${path}`)).status, 401, path);
    assert.equal((await fetch(`${base}${path}`, { headers: { Authorization: 'Bearer wrong-token-wrong-token' } })).status, 401, path);
  }
  const page = await fetch(`${base}/`);
  assert.match(await page.text(), /<form method="post" action="\/login">/, 'the page asks for the token');
  assert.equal((await fetch(`${base}/api/requeue`, { method: 'POST', body: '{"all": true}' })).status, 401);

  const noCsrf = await fetch(`${base}/api/requeue`, { method: 'POST', headers: { ...bearer, 'Content-Type': 'application/json' }, body: '{"all": true}' });
  assert.equal(noCsrf.status, 403);
  assert.deepEqual(await noCsrf.json(), { error: 'missing or wrong X-CSRF-Token; use the page, which sends it' });
  assert.deepEqual(await db.rows('SELECT status FROM jobs'), [{ status: 'failed' }], 'nothing changed');

  const csrf = await csrfOf();
  const ok = await fetch(`${base}/api/requeue`, { method: 'POST', headers: { ...bearer, 'X-CSRF-Token': csrf }, body: JSON.stringify({ ids: [failed] }) });
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), { requeued: 1 });
  assert.deepEqual(await db.rows('SELECT status FROM jobs'), [{ status: 'unclaimed' }]);
});

test('the login form sets an HttpOnly, SameSite=Strict cookie that opens the page and the API', async () => {
  const form = await (await fetch(`${base}/login`)).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(form)![1]!;
  const wrong = await fetch(`${base}/login`, { method: 'POST', body: new URLSearchParams({ csrf, token: 'not-the-token-at-all' }), redirect: 'manual' });
  assert.equal(wrong.status, 401);
  const login = await fetch(`${base}/login`, { method: 'POST', body: new URLSearchParams({ csrf, token }), redirect: 'manual' });
  assert.equal(login.status, 303);
  const cookie = login.headers.get('set-cookie')!;
  assert.match(cookie, /^jobq_session=[\w-]+; HttpOnly; SameSite=Strict; Path=\/$/);
  assert.ok(!cookie.includes(token), 'the cookie is not the token itself');
  const session = cookie.split(';')[0]!;
  assert.equal((await fetch(`${base}/api/stats`, { headers: { Cookie: session } })).status, 200);
  assert.match(await (await fetch(`${base}/`, { headers: { Cookie: session } })).text(), /<h2>Failed jobs<\/h2>/);
});

test('malformed requests get a 4xx with a short message and change nothing', async () => {
  const csrf = await csrfOf();
  const headers = { ...bearer, 'X-CSRF-Token': csrf };
  const before = await db.rows('SELECT id, status FROM jobs ORDER BY id');
  const cases: Array<[string, RequestInit & { path: string }, number, RegExp]> = [
    ['unknown route', { path: '/api/nothing' }, 404, /^no such page: GET \/api\/nothing$/],
    ['bad ids', { path: '/api/cancel', method: 'POST', headers, body: '{"ids": ["1; DROP TABLE jobs"]}' }, 400, /^ids must be a list of 1 to 1000 job ids/],
    ['not JSON', { path: '/api/cancel', method: 'POST', headers, body: 'ids=1' }, 400, /^the body must be a JSON object$/],
    ['huge body', { path: '/api/cancel', method: 'POST', headers, body: JSON.stringify({ ids: Array(20_000).fill(1) }) }, 413, /^the body is over 16384 bytes$/],
    ['bad page', { path: '/api/failed?limit=9999' }, 400, /^limit must be a whole number from 1 to 500$/],
    ['bad status', { path: '/api/jobs?kind=email&status=gone' }, 400, /^status must be one of unclaimed, claimed, done, failed, cancelled, scheduled, not "gone"$/],
    ['group without its kind', { path: '/api/jobs?group=acct-1' }, 400, /^a search by group needs the kind too/],
    ['empty key', { path: '/api/jobs?key=' }, 400, /^a key to search for is a non-empty string$/],
    ['bad kind', { path: '/api/pause', method: 'POST', headers, body: JSON.stringify({ kind: 'k'.repeat(65) }) }, 400, /kind must be a string of 1-64 characters/],
  ];
  for (const [name, { path, ...init }, status, message] of cases) {
    const response = await fetch(`${base}${path}`, { ...init, headers: { ...bearer, ...(init.headers as object) } });
    assert.equal(response.status, status, name);
    assert.match(((await response.json()) as { error: string }).error, message, name);
  }
  assert.deepEqual(await db.rows('SELECT id, status FROM jobs ORDER BY id'), before);
  assert.deepEqual(await queue.pausedKinds(), []);
});

test('limits set and lifted from the page: shown in the stats it reads, and bad values refused with a 400 and nothing changed', async () => {
  const csrf = await csrfOf();
  const post = (path: string, body: unknown) => fetch(`${base}${path}`, { method: 'POST', headers: { ...bearer, 'X-CSRF-Token': csrf }, body: JSON.stringify(body) });
  const set = await post('/api/limit', { kind: 'charge', concurrency: 5, rate: '100/1s', groupRate: '10/1m' });
  assert.equal(set.status, 200);
  const expected = { kind: 'charge', concurrency: 5, groupConcurrency: null, rate: { jobs: 100, perSeconds: 1 }, groupRate: { jobs: 10, perSeconds: 60 }, running: 0 };
  assert.deepEqual(await set.json(), { limits: [expected] });
  const { stats } = (await (await fetch(`${base}/api/stats`, { headers: bearer })).json()) as { stats: { byKind: Array<{ kind: string; limit: unknown }> } };
  assert.deepEqual(stats.byKind.find((entry) => entry.kind === 'charge')?.limit, { concurrency: 5, groupConcurrency: null, rate: { jobs: 100, perSeconds: 1 }, groupRate: { jobs: 10, perSeconds: 60 }, running: 0, heldBack: 0 });

  const bad: Array<[unknown, RegExp]> = [
    [{ kind: 'charge', rate: '100' }, /^rate must be a number of jobs per length of time like 100\/1s/],
    [{ kind: 'charge', concurrency: 0 }, /^concurrency must be a whole number from 1 to 1000000, not 0$/],
    [{ kind: 'charge', burst: 3 }, /^unknown limit "burst"/],
    [{ kind: 'charge' }, /^a limit needs one of concurrency, groupConcurrency, rate, groupRate/],
  ];
  for (const [body, message] of bad) {
    const response = await post('/api/limit', body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.match(((await response.json()) as { error: string }).error, message);
  }
  assert.deepEqual(await queue.limits(), [expected], 'nothing changed');
  const lifted = await post('/api/limit/remove', { kind: 'charge' });
  assert.deepEqual(await lifted.json(), { limits: [] });
});

test('/metrics parses as Prometheus text, and its counts and totals match the table after a known run', async () => {
  await db.admin.query(`DELETE FROM \`${db.name}\`.jobs`);
  await queue.recount();
  await queue.enqueueMany(Array.from({ length: 300 }, (_, n) => ({ kind: n % 3 === 0 ? 'report' : 'email' })));
  const worker = queue.work({ email: async () => undefined }, { once: true });
  await worker.finished;
  await queue.enqueue({ kind: 'email', payload: { note: '<script>alert(1)</script>' } });
  const text = await (await fetch(`${base}/metrics`, { headers: bearer })).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-z_]+)(\{[^}]*\})? (-?[\d.e+]+)$/.exec(line);
    assert.ok(match, `a Prometheus sample line: ${line}`);
    samples.set(`${match[1]}${match[2] ?? ''}`, Number(match[3]));
  }
  assert.equal(samples.get('jobq_jobs_completed_total{kind="email"}'), 200, 'the completed counter equals the jobs the run handled');
  assert.equal(samples.get('jobq_jobs{status="unclaimed",kind="report"}'), 100);
  assert.equal(samples.get('jobq_jobs{status="unclaimed",kind="email"}'), 1);
  assert.equal(samples.get('jobq_jobs_failed_total{kind="email"}'), 0);
  assert.ok((samples.get('jobq_claims_total') ?? 0) >= 1);
  assert.ok(samples.has('jobq_empty_claims_total'));
  assert.ok((samples.get('jobq_oldest_waiting_seconds{kind="report"}') ?? -1) >= 0);
  assert.ok(samples.has('jobq_oldest_waiting_seconds{kind="(any)"}'));
});

test('payloads and errors travel as JSON strings, and no response holds the password', async () => {
  const id = await queue.enqueue({ kind: 'email', payload: { html: '<img src=x onerror=alert(1)>' } });
  await db.admin.query(`UPDATE \`${db.name}\`.jobs SET status = 'failed', last_error = '<script>alert(2)</script>' WHERE id = ?`, [id]);
  const failed = (await (await fetch(`${base}/api/failed`, { headers: bearer })).json()) as { jobs: Array<{ id: number; lastError: string; payloadPreview: string }> };
  const job = failed.jobs.find((j) => j.id === id)!;
  assert.equal(job.lastError, '<script>alert(2)</script>');
  assert.match(job.payloadPreview, /<img src=x onerror=alert\(1\)>/);
  const page = await fetch(`${base}/`, { headers: bearer });
  assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  const bodies = await Promise.all(['/', '/api/stats', '/api/failed', '/metrics'].map(async (path) => (await fetch(`${base}${path}`, { headers: bearer })).text()));
  for (const body of bodies) assert.ok(!body.includes(password));
  assert.ok(!bodies[0]!.includes('onerror'), 'the page itself carries no job data');
});

/** A request with any Host and headers (fetch will not send a Host of our choosing). */
function rawRequest(target: string, options: { method?: string; host: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string }> {
  const { hostname, port, pathname } = new URL(target);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ hostname, port, path: pathname, method: options.method ?? 'GET', headers: { ...options.headers, Host: options.host } }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

test('DNS rebinding: without a token, a request naming another host is refused, and so is a POST from another origin', async () => {
  const open = startCli(['dashboard', '--port', '0', '--database-url', db.url]);
  try {
    const home = (await open.waitFor(/^jobq dashboard on (http:\/\/127\.0\.0\.1:(\d+)) /m))[1]!;
    const port = new URL(home).port;
    const failed = await queue.enqueue({ kind: 'email', payload: { secret: 'in a payload' } });
    await db.admin.query(`UPDATE \`${db.name}\`.jobs SET status = 'failed' WHERE id = ?`, [failed]);
    // The attacker's page at evil.example:PORT, its name re-pointed at 127.0.0.1.
    for (const path of ['/', '/api/failed', '/api/stats', '/metrics']) {
      const answer = await rawRequest(`${home}${path}`, { host: `evil.example:${port}` });
      assert.equal(answer.status, 421, path);
      assert.deepEqual(JSON.parse(answer.body), { error: `this dashboard answers to 127.0.0.1 and localhost only, not "evil.example:${port}"` });
    }
    const page = await rawRequest(`${home}/`, { host: `127.0.0.1:${port}` });
    assert.equal(page.status, 200, 'the dashboard answers to its own address');
    assert.equal((await rawRequest(`${home}/`, { host: `localhost:${port}` })).status, 200, 'and to localhost');
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page.body)![1]!;
    const post = (host: string, origin: string) =>
      rawRequest(`${home}/api/requeue`, { method: 'POST', host, headers: { Origin: origin, 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' }, body: '{"all": true}' });
    assert.equal((await post(`evil.example:${port}`, `http://evil.example:${port}`)).status, 421, 'the rebinding page cannot POST');
    const crossOrigin = await post(`127.0.0.1:${port}`, `http://evil.example:${port}`);
    assert.equal(crossOrigin.status, 403);
    assert.deepEqual(JSON.parse(crossOrigin.body), { error: "a POST from another origin is refused; use the dashboard's own page" });
    assert.deepEqual(await db.rows('SELECT status FROM jobs WHERE id = ?', [failed]), [{ status: 'failed' }], 'nothing changed');
    assert.equal((await post(`127.0.0.1:${port}`, `http://127.0.0.1:${port}`)).status, 200, "the dashboard's own page may POST");
    assert.deepEqual(await db.rows('SELECT status FROM jobs WHERE id = ?', [failed]), [{ status: 'unclaimed' }]);
  } finally {
    open.kill('SIGINT');
    assert.equal((await open.done).code, 0);
  }
});

test('with a token too, a request naming another host is refused', async () => {
  const port = new URL(base).port;
  const answer = await rawRequest(`${base}/api/stats`, { host: `evil.example:${port}`, headers: bearer });
  assert.equal(answer.status, 421);
});
