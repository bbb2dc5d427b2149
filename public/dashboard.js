// The dashboard's script. Every value from the queue goes into the page as text (textContent),
// never as markup: kinds, payloads and errors are whatever users put in their jobs.
'use strict';

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const PAGE = 20;
let failedOffset = 0;
let chart;

async function getJson(path) {
  const response = await fetch(path, { credentials: 'same-origin' });
  if (response.status === 401) location.reload();
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return response.json();
}

async function post(path, body) {
  const response = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
    body: JSON.stringify(body),
  });
  const result = await response.json();
  if (!response.ok) throw new Error(result.error);
  await refresh();
  return result;
}

function cell(row, text) {
  const td = row.insertCell();
  td.textContent = text === null || text === undefined ? '' : String(text);
  return td;
}

function button(td, label, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.addEventListener('click', onClick);
  td.append(b);
}

/**
 * Draws a table's rows, changing only the cells whose markup changed. Replacing every row at each
 * redraw lost clicks: a button or link replaced between the press and the release of the mouse
 * gets no click. A cell of the same markup in a row of the same attributes (its kind or id) does
 * the same thing when pressed, so it stays.
 */
function fill(tableId, rows, render) {
  const body = document.querySelector(`#${tableId} tbody`);
  const shell = (tr) => tr.cloneNode(false).outerHTML;
  rows.forEach((row, index) => {
    const tr = document.createElement('tr');
    render(tr, row);
    const old = body.rows[index];
    if (old === undefined) return body.append(tr);
    if (shell(old) !== shell(tr) || old.cells.length !== tr.cells.length) return old.replaceWith(tr);
    for (const [column, td] of [...tr.cells].entries()) if (old.cells[column].outerHTML !== td.outerHTML) old.cells[column].replaceWith(td);
  });
  while (body.rows.length > rows.length) body.rows[rows.length].remove();
}

/** A kind's limits as `jobq stats` shows them: `3`, `1/group`, `100/1s`, `20/1m/group`. */
function limitText(limit) {
  if (limit === null) return '';
  const rate = ({ jobs, perSeconds }) => (perSeconds % 3600 === 0 ? `${jobs}/${perSeconds / 3600}h` : perSeconds % 60 === 0 ? `${jobs}/${perSeconds / 60}m` : `${jobs}/${perSeconds}s`);
  return [
    limit.concurrency === null ? '' : String(limit.concurrency),
    limit.groupConcurrency === null ? '' : `${limit.groupConcurrency}/group`,
    limit.rate === null ? '' : rate(limit.rate),
    limit.groupRate === null ? '' : `${rate(limit.groupRate)}/group`,
  ].filter((part) => part !== '').join(', ');
}

const seconds = (s) => (s === null || s === undefined ? 'none waiting' : `${s.toFixed(2)} s`);

async function refresh() {
  const { at, stats } = await getJson('/api/stats');
  if (stats === undefined) return;
  document.getElementById('updated').textContent = `updated ${new Date(at).toLocaleTimeString()}`;
  fill('statuses', [...Object.entries(stats.counts), ['total', stats.total]], (tr, [status, count]) => {
    tr.dataset.status = status;
    cell(tr, status);
    cell(tr, count);
  });
  document.getElementById('oldest').textContent = seconds(stats.headAgeSeconds);
  // A limit on every kind together: a row of its own, with the whole table's counts.
  const sum = (of) => stats.byKind.reduce((total, k) => total + of(k), 0);
  const everyKind = stats.everyKindLimit === null ? [] : [{ kind: '*', counts: stats.counts, totals: { completed: sum((k) => k.totals.completed) }, paused: false, limit: stats.everyKindLimit, everyKind: true }];
  fill('kinds', [...everyKind, ...stats.byKind], (tr, k) => {
    const kind = k.kind ?? '(none)';
    tr.dataset.kind = kind;
    for (const value of [k.everyKind ? '* (every kind)' : kind, k.counts.unclaimed, k.counts.scheduled, k.counts.claimed, k.counts.failed, k.counts.done, k.counts.cancelled, k.totals.completed, k.paused ? 'yes' : '', limitText(k.limit)]) cell(tr, value);
    const actions = cell(tr, '');
    if (k.kind !== null && !k.everyKind) button(actions, k.paused ? 'Resume' : 'Pause', () => post(k.paused ? '/api/resume' : '/api/pause', { kind: k.kind }).catch(alertError));
    if (k.limit !== null) button(actions, 'Lift limit', () => post('/api/limit/remove', { kind: k.kind }).catch(limitError));
  });
  const skipped = document.getElementById('skipped-schedules');
  skipped.replaceChildren(
    ...stats.skippedSchedules.map(({ name, reason }) => {
      const li = document.createElement('li');
      li.textContent = `schedule "${name}" is skipped by the workers: ${reason}`;
      return li;
    }),
  );
  fill('owners', stats.claimedByOwner, (tr, o) => {
    cell(tr, o.ownerId ?? '?');
    cell(tr, o.count);
    cell(tr, o.leaseLeftSeconds >= 0 ? `${o.leaseLeftSeconds.toFixed(1)} s` : `ran out ${(-o.leaseLeftSeconds).toFixed(1)} s ago`);
  });
  await refreshFailed();
  await refreshChart();
  await refreshFound();
  await refreshJob();
}

// The search: its fields as they were when Find was pressed, and the page shown.
let search;
let foundOffset = 0;

async function refreshFound() {
  if (search === undefined) return;
  const query = new URLSearchParams({ ...search, offset: String(foundOffset), limit: String(PAGE) });
  const { jobs } = await getJson(`/api/jobs?${query}`);
  fill('found', jobs, (tr, job) => {
    tr.dataset.id = job.id;
    idCell(tr, job.id);
    for (const value of [job.kind, job.group, job.status, job.priority, job.attempts, new Date(job.runAfter).toLocaleString(), job.lastError]) cell(tr, value);
  });
  document.getElementById('search-result').textContent = jobs.length === 0 ? 'no such job' : '';
  document.getElementById('found-page').textContent = jobs.length === 0 ? '' : `${foundOffset + 1}-${foundOffset + jobs.length}`;
}

/** The job whose panel is open (#job/ID), or undefined. */
const openJobId = () => {
  const match = /^#job\/(\d+)$/.exec(location.hash);
  return match === null ? undefined : Number(match[1]);
};

async function refreshJob() {
  const id = openJobId();
  const panel = document.getElementById('job');
  panel.hidden = id === undefined;
  if (id === undefined) return;
  document.getElementById('job-id').textContent = String(id);
  const response = await fetch(`/api/job?id=${id}`, { credentials: 'same-origin' });
  if (response.status === 404) {
    fill('job-fields', [['status', 'no such job: never queued, or finished and deleted']], fieldRow);
    document.getElementById('job-errors').replaceChildren();
    return;
  }
  if (!response.ok) throw new Error(`/api/job: ${response.status}`);
  const { job } = await response.json();
  const text = (value) => (value === undefined ? '' : JSON.stringify(value));
  const when = (iso) => (iso === null ? '' : new Date(iso).toLocaleString());
  const fields = [
    ['kind', job.kind ?? '(none)'],
    ['status', job.cancelRequestedAt !== null && job.status === 'claimed' ? 'claimed (cancel asked)' : job.status],
    ['group', job.group ?? ''],
    ['payload', text(job.payload)],
    ['priority', job.priority],
    ['attempts', job.attempts],
    ['snoozes', job.snoozes],
    ['key', job.key ?? job.uniqueKey ?? ''],
    ['queued', when(job.createdAt)],
    [job.status === 'unclaimed' || job.status === 'scheduled' ? 'due' : job.status === 'claimed' ? 'lease ends' : 'ended', when(job.runAfter)],
    ['owner', job.ownerId ?? ''],
    ['lease left', job.leaseLeftSeconds === null ? '' : `${job.leaseLeftSeconds.toFixed(1)} s`],
    ['progress', job.progress === null ? '' : text(job.progress)],
    ['result', text(job.result)],
    ['last error', job.lastError ?? ''],
  ];
  fill('job-fields', fields, fieldRow);
  document.getElementById('job-errors').replaceChildren(
    ...job.errors.map((error) => {
      const li = document.createElement('li');
      li.textContent = `attempt ${error.attempt} at ${when(error.at)}: ${error.message}`;
      if (error.stack !== null) {
        const pre = document.createElement('pre');
        pre.textContent = error.stack;
        li.append(pre);
      }
      return li;
    }),
  );
}

function fieldRow(tr, [name, value]) {
  tr.dataset.field = name;
  const th = document.createElement('th');
  th.textContent = name;
  tr.append(th);
  cell(tr, value);
}

/** A cell with a link to the job's panel. */
function idCell(tr, id) {
  const a = document.createElement('a');
  a.href = `#job/${id}`;
  a.textContent = String(id);
  tr.insertCell().append(a);
}

async function refreshFailed() {
  const { jobs } = await getJson(`/api/failed?offset=${failedOffset}&limit=${PAGE}`);
  fill('failed', jobs, (tr, job) => {
    tr.dataset.id = job.id;
    idCell(tr, job.id);
    for (const value of [job.kind, job.attempts, job.lastError, job.payloadPreview]) cell(tr, value);
    button(cell(tr, ''), 'Requeue', () => post('/api/requeue', { ids: [job.id] }).catch(alertError));
  });
  document.getElementById('page').textContent = `${failedOffset + 1}-${failedOffset + jobs.length}`;
}

async function refreshChart() {
  const { points } = await getJson('/api/throughput');
  const data = [points.map((p) => p.at), points.map((p) => p.completedPerSecond), points.map((p) => p.enqueuedPerSecond)];
  if (chart === undefined) {
    const target = document.getElementById('chart');
    chart = new uPlot(
      {
        width: Math.min(900, target.clientWidth || 900),
        height: 240,
        series: [{}, { label: 'completed/s', stroke: '#1f77b4' }, { label: 'enqueued/s', stroke: '#d62728' }],
        axes: [{}, { label: 'jobs/s' }],
      },
      data,
      target,
    );
  } else {
    chart.setData(data);
  }
}

function alertError(error) {
  document.getElementById('cancel-result').textContent = error.message;
}

function jobAction(path, describe) {
  const id = openJobId();
  post(path, { ids: [id] })
    .then((r) => (document.getElementById('job-result').textContent = describe(r, id)))
    .catch((error) => (document.getElementById('job-result').textContent = error.message));
}

document.getElementById('search').addEventListener('submit', (event) => {
  event.preventDefault();
  const fields = {};
  for (const name of ['id', 'key', 'kind', 'group', 'status']) {
    const value = document.getElementById(`search-${name}`).value.trim();
    if (value !== '') fields[name] = value;
  }
  search = fields;
  foundOffset = 0;
  refreshFound().catch((error) => (document.getElementById('search-result').textContent = error.message));
});
/** A list's Previous and Next buttons, which move its offset by a page. */
function pager(previousId, nextId, move) {
  document.getElementById(previousId).addEventListener('click', () => move(-PAGE));
  document.getElementById(nextId).addEventListener('click', () => move(PAGE));
}
pager('found-previous', 'found-next', (by) => {
  foundOffset = Math.max(0, foundOffset + by);
  refreshFound().catch(alertError);
});
pager('previous', 'next', (by) => {
  failedOffset = Math.max(0, failedOffset + by);
  refreshFailed().catch(alertError);
});
window.addEventListener('hashchange', () => {
  document.getElementById('job-result').textContent = '';
  refreshJob().catch(alertError);
});
document.getElementById('job-close').addEventListener('click', () => (location.hash = ''));
document.getElementById('job-cancel').addEventListener('click', () =>
  jobAction('/api/cancel', (r, id) => (r.cancelled.length > 0 ? `cancelled job ${id}` : r.cancelling.length > 0 ? 'running: its worker cancels it' : r.done.length > 0 ? 'it is done' : 'no such job')),
);
document.getElementById('job-requeue').addEventListener('click', () => jobAction('/api/requeue', (r) => (r.requeued > 0 ? 'requeued' : 'not requeued: only failed jobs are')));
document.getElementById('job-run-now').addEventListener('click', () => jobAction('/api/run-now', (r) => (r.delayed > 0 ? 'due now' : 'not delayed: nothing to do')));

document.getElementById('requeue-all').addEventListener('click', () => post('/api/requeue', { all: true }).catch(alertError));
document.getElementById('cancel').addEventListener('submit', (event) => {
  event.preventDefault();
  const id = Number(document.getElementById('cancel-id').value);
  post('/api/cancel', { ids: [id] })
    .then((r) => {
      const text = r.cancelled.length > 0 ? `cancelled job ${id}` : r.cancelling.length > 0 ? `job ${id} is running: its worker cancels it` : `not cancelled: ${r.done.length > 0 ? 'it is done' : 'no such job'}`;
      document.getElementById('cancel-result').textContent = text;
    })
    .catch(alertError);
});

function limitError(error) {
  document.getElementById('limit-result').textContent = error.message;
}

document.getElementById('limit').addEventListener('submit', (event) => {
  event.preventDefault();
  const value = (id) => document.getElementById(id).value.trim();
  const number = (id) => (value(id) === '' ? undefined : Number(value(id)));
  const text = (id) => (value(id) === '' ? undefined : value(id));
  const kind = value('limit-kind');
  const limit = { kind, concurrency: number('limit-concurrency'), groupConcurrency: number('limit-group-concurrency'), rate: text('limit-rate'), groupRate: text('limit-group-rate') };
  post('/api/limit', limit)
    .then(() => {
      document.getElementById('limit-result').textContent = `limit of kind "${kind}" set`;
    })
    .catch(limitError);
});

refresh().catch(alertError);
setInterval(() => refresh().catch(alertError), 2000);
