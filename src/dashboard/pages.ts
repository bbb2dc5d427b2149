/**
 * The two pages, as static markup: the data comes from /api/* and is put into the page by
 * public/dashboard.js with textContent only. The few values written in here are escaped.
 */

import { JOB_STATUSES } from '../queue/types.js';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const head = (csrf: string, title: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${escapeHtml(csrf)}">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/assets/uplot.css">
<link rel="stylesheet" href="/assets/dashboard.css">
</head>`;

export function loginPage(csrf: string, message?: string): string {
  return `${head(csrf, 'jobq: log in')}
<body>
<main class="login">
<h1>jobq</h1>
<form method="post" action="/login">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<label>Token <input type="password" name="token" autocomplete="current-password" autofocus required></label>
<button type="submit">Log in</button>
</form>
${message === undefined ? '' : `<p class="error" role="alert">${escapeHtml(message)}</p>`}
</main>
</body>
</html>
`;
}

export function dashboardPage(csrf: string, where: string): string {
  return `${head(csrf, 'jobq dashboard')}
<body>
<header><h1>jobq</h1><span id="where">${escapeHtml(where)}</span><span id="updated"></span></header>
<main>
<section><h2>Jobs</h2>
<table id="statuses"><thead><tr><th>status</th><th>jobs</th></tr></thead><tbody></tbody></table>
<p>Longest wait of a due job: <strong id="oldest">-</strong></p>
</section>
<section class="wide"><h2>Kinds</h2>
<ul id="skipped-schedules" class="error"></ul>
<table id="kinds"><thead><tr><th>kind</th><th>waiting</th><th>scheduled</th><th>running</th><th>failed</th><th>done</th><th>cancelled</th><th>completed (total)</th><th>paused</th><th>limit</th><th></th></tr></thead><tbody></tbody></table>
<form id="limit"><label>Kind <input id="limit-kind" required placeholder="email, or * for every kind"></label>
<label>Running at once <input id="limit-concurrency" inputmode="numeric" placeholder="10"></label>
<label>per group <input id="limit-group-concurrency" inputmode="numeric" placeholder="1"></label>
<label>Rate <input id="limit-rate" placeholder="100/1s"></label>
<label>per group <input id="limit-group-rate" placeholder="10/1m"></label>
<button type="submit">Set limit</button> <span id="limit-result"></span></form>
</section>
<section><h2>Throughput, last 15 minutes</h2><div id="chart"></div></section>
<section><h2>Running claims</h2>
<table id="owners"><thead><tr><th>owner</th><th>jobs</th><th>shortest lease left</th></tr></thead><tbody></tbody></table>
</section>
<section class="wide"><h2>Failed jobs</h2>
<p><button id="requeue-all" type="button">Requeue all failed</button></p>
<table id="failed"><thead><tr><th>id</th><th>kind</th><th>attempts</th><th>last error</th><th>payload</th><th></th></tr></thead><tbody></tbody></table>
<p><button id="previous" type="button">Newer</button> <span id="page"></span> <button id="next" type="button">Older</button></p>
</section>
<section><h2>Cancel a job</h2>
<form id="cancel"><label>Job id <input id="cancel-id" inputmode="numeric" required></label> <button type="submit">Cancel</button> <span id="cancel-result"></span></form>
</section>
<section class="wide"><h2>Find jobs</h2>
<form id="search"><label>Id <input id="search-id" inputmode="numeric" size="8"></label>
<label>Key <input id="search-key" size="12"></label>
<label>Kind <input id="search-kind" size="12"></label>
<label>Group <input id="search-group" size="12"></label>
<label>Status <select id="search-status"><option value="">any</option>${JOB_STATUSES.map((status) => `<option>${status}</option>`).join('')}</select></label>
<button type="submit">Find</button> <span id="search-result"></span></form>
<table id="found"><thead><tr><th>id</th><th>kind</th><th>group</th><th>status</th><th>priority</th><th>attempts</th><th>due, lease end or end</th><th>last error</th></tr></thead><tbody></tbody></table>
<p><button id="found-previous" type="button">Previous</button> <span id="found-page"></span> <button id="found-next" type="button">Next</button></p>
</section>
<section class="wide" id="job" hidden><h2>Job <span id="job-id"></span></h2>
<table id="job-fields"><tbody></tbody></table>
<h3>Errors of its attempts</h3><ol id="job-errors"></ol>
<p><button id="job-cancel" type="button">Cancel</button> <button id="job-requeue" type="button">Requeue</button> <button id="job-run-now" type="button">Run now</button> <button id="job-close" type="button">Close</button> <span id="job-result"></span></p>
</section>
</main>
<script src="/assets/uplot.js"></script>
<script src="/assets/dashboard.js"></script>
</body>
</html>
`;
}
