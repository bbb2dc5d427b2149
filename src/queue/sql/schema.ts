import { exactCollation, type ServerVersion } from '../../db/server-version.js';
import { DEFAULTS } from '../../config/defaults.js';
import { ADD_CANCELLED_COUNT_SQL, ADD_KEPT_COUNTS_SQL, ADD_WAITING_COUNT_SQL, CREATE_COUNTERS_TABLE_SQL } from '../../claim/sql/counters.js';
import { CREATE_NEW_JOBS_TABLE_SQL } from './new-jobs.js';
import { CREATE_FOLD_MARKS_TABLE_SQL, CREATE_UNCOUNTED_WRITERS_TABLE_SQL } from './uncounted-jobs.js';
import { CREATE_JOB_KEYS_TABLE_SQL } from './job-keys.js';
import { CREATE_LANES_TABLE_SQL, insertLanesSql } from '../../claim/sql/lanes.js';
import { createLimitsTableSql, groupAndRateLimitsSql } from '../../claim/sql/limits.js';
import { CREATE_GROUP_LOCKS_TABLE_SQL, CREATE_GROUPED_KINDS_TABLE_SQL } from '../../claim/sql/groups.js';
import { CREATE_PAUSED_KINDS_TABLE_SQL } from '../../claim/sql/pause.js';
import { CREATE_SCHEDULES_TABLE_SQL } from './schedules.js';
import type { QuotedIdentifier } from '../../config/identifiers.js';
import { JOB_STATUSES } from '../types.js';
import { MAX_TRACE_CONTEXT_LENGTH } from '../../tracing/job-spans.js';
import { CREATE_UNIQUE_WINDOWS_TABLE_SQL, JOB_KEY_SQL, UNIQUE_SCOPES } from './unique-jobs.js';

/**
 * The jobs table's history, one numbered migration each. `setup-tables` applies the ones a table
 * lacks, in order. The version lives in the table's own COMMENT ("jobq schema N"), set by the same
 * ALTER TABLE that changes the columns, so a table and its version can never disagree, and a dump
 * or a RENAME TABLE carries both.
 */
export interface Migration {
  version: number;
  description: string;
  /** The statements, for a table name that is already validated and quoted, on this server, partitioned or not. */
  sql: (table: QuotedIdentifier, server: ServerVersion, partitioned: boolean) => string;
  /** Values for the statements' `?` placeholders, given the table's plain name. */
  values?: (name: string) => unknown[];
}

/** The first `count` job statuses, in the ENUM's order: new ones go last (an ENUM's values are stored as their position). */
const jobStatusList = (count: number) => JOB_STATUSES.slice(0, count).map((status) => `'${status}'`).join(', ');

export const schemaComment = (version: number): string => `jobq schema ${version}`;

/** Columns of the article's table: a table with exactly these and no jobq comment is version 1. */
export const ARTICLE_COLUMNS = ['id', 'd', 'e', 'status', 'owner_id', 'owner_date'];

/** The article's jobs table (schema 1); the bench's reference loops use it as it is. */
export const articleTableSql = (table: QuotedIdentifier) => `
      CREATE TABLE IF NOT EXISTS ${table} (
        id INTEGER NOT NULL PRIMARY KEY AUTO_INCREMENT,
        d VARCHAR(64) NOT NULL,
        e VARCHAR(64) NOT NULL,
        status ENUM('unclaimed', 'claimed', 'done') NOT NULL,
        owner_id INTEGER NULL,
        owner_date DATETIME NULL,
        KEY d (d),
        KEY status (status)
      ) ENGINE = InnoDB COMMENT = '${schemaComment(1)}'`;

/** The jobs table's JSON columns, unchecked on MariaDB from schema 23. */
const UNCHECKED_JSON_COLUMNS = ['payload', 'result', 'progress', 'errors'];

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: "the article's jobs table", sql: articleTableSql },
  {
    version: 2,
    description: 'leases, attempts, claim tokens, idempotent inserts, claim indexes',
    // run_after is when a job may next be handed out: for an unclaimed job the time it was queued
    // (or is delayed to), for a claimed one the end of its lease. One column, one index
    // (status, run_after), serves both "what is waiting" and "whose lease ran out" as index ranges,
    // so neither the candidate query nor the stats ever scan the table.
    // (status, d) serves the article's `d LIKE 'x%'` pick. The article's single-column indexes go:
    // (status) is a prefix of (status, run_after) and (d) alone cannot skip claimed rows.
    // TIMESTAMP, not DATETIME: compared with NOW(6) in UTC whatever the session's time zone.
    sql: (table) => `
      ALTER TABLE ${table}
        MODIFY id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
        MODIFY d VARCHAR(64) NOT NULL DEFAULT '',
        MODIFY e VARCHAR(64) NOT NULL DEFAULT '',
        MODIFY status ENUM('unclaimed', 'claimed', 'done', 'failed') NOT NULL DEFAULT 'unclaimed',
        MODIFY owner_date TIMESTAMP(6) NULL DEFAULT NULL,
        ADD COLUMN job_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
        ADD COLUMN run_after TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
        ADD COLUMN claim_token BINARY(16) NULL DEFAULT NULL,
        ADD COLUMN attempts SMALLINT UNSIGNED NOT NULL DEFAULT 0,
        ADD COLUMN created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
        DROP INDEX d,
        DROP INDEX status,
        ADD UNIQUE KEY job_key (job_key),
        ADD KEY status_run_after (status, run_after),
        ADD KEY status_d (status, d),
        COMMENT = '${schemaComment(2)}'`,
  },
  {
    version: 3,
    description: 'real jobs: a kind, a JSON payload, the last error',
    // JSON is native in MySQL and a checked LONGTEXT in MariaDB; either way the server refuses
    // text that is not JSON. jobq itself caps payloads at 64 KiB before they are sent.
    // (kind, status, run_after) lets `work --kind K` claim one kind by an index range and gives
    // the per-kind stats a covering index.
    sql: (table) => `
      ALTER TABLE ${table}
        ADD COLUMN kind VARCHAR(64) NULL DEFAULT NULL,
        ADD COLUMN payload JSON NULL DEFAULT NULL,
        ADD COLUMN last_error VARCHAR(1000) NULL DEFAULT NULL,
        ADD KEY kind_status_run_after (kind, status, run_after),
        COMMENT = '${schemaComment(3)}'`,
  },
  {
    version: 4,
    description: 'cheaper claims: fewer index entries move, claim columns updated in place',
    // Measured with a one-connection claim-and-delete loop (docs/performance.md, "The article's
    // demo"): the server spent 53 µs of CPU per job at schema 3 and 47 µs at schema 4. What a
    // claim costs is mostly index entries that move because it changes their columns:
    // - (kind, status, run_after) moved on every claim, with or without a kind (-7 µs). It now
    //   indexes copies of status and run_after that are NULL for jobs without a kind, so only jobs
    //   that have one pay for it. STORED, not VIRTUAL: the server then compares old and new values
    //   like any column's and leaves an unchanged entry alone.
    // - owner_id, owner_date and claim_token going from NULL to a value made every claim rewrite
    //   the row instead of updating it in place (-5 µs). They are never NULL now: owner 0 is
    //   nobody, the all-zero token is held by nobody, owner_date is when the owner last changed.
    // - (status, d) moves on every claim too (5 µs) and stays: the article's (d) alone, which does
    //   not move, made the prefix pick check the status on the row, and with --keep-done the done
    //   rows piled up in its ranges: p95 insert-to-claim latency went from 35 ms to 268 ms within
    //   30 s of the default run, and the consumers fell behind.
    // The UPDATE first gives existing rows those values, which NOT NULL requires.
    sql: (table) => `
      UPDATE ${table}
         SET owner_id = COALESCE(owner_id, 0), owner_date = COALESCE(owner_date, created_at),
             claim_token = COALESCE(claim_token, '')
       WHERE owner_id IS NULL OR owner_date IS NULL OR claim_token IS NULL;
      ALTER TABLE ${table}
        MODIFY owner_id INTEGER NOT NULL DEFAULT 0,
        MODIFY owner_date TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
        MODIFY claim_token BINARY(16) NOT NULL DEFAULT '',
        ADD COLUMN kind_status ENUM('unclaimed', 'claimed', 'done', 'failed') AS (IF(kind IS NULL, NULL, status)) STORED,
        ADD COLUMN kind_run_after TIMESTAMP(6) AS (IF(kind IS NULL, NULL, run_after)) STORED,
        DROP INDEX kind_status_run_after,
        ADD KEY kind_status_run_after (kind, kind_status, kind_run_after),
        COMMENT = '${schemaComment(4)}'`,
  },
  {
    version: 5,
    description: 'claim turns coordinated through lane rows, for workers that share no parent process',
    // Workers on many machines share nothing but the server, so the server holds their turns: a
    // claim locks one row of jobq_lanes with SKIP LOCKED in its own transaction and claims from
    // that lane (LANE_FILTER in sql/claim.ts). No two claims in flight read the same candidates, and no more
    // claims run at once than there are rows. Row locks, not GET_LOCK(): Galera refuses
    // GET_LOCK (MDEV-30473), and a row lock ends with the transaction, also when the worker dies.
    sql: (table) => `
      ${CREATE_LANES_TABLE_SQL};
      ${insertLanesSql(DEFAULTS.lanes)};
      ALTER TABLE ${table} COMMENT = '${schemaComment(5)}'`,
    values: (name) => Array(DEFAULTS.lanes).fill(name),
  },
  {
    version: 6,
    description: 'priorities',
    // Smaller runs first; 0 by default. Claims read waiting jobs in (priority, run_after) order, so
    // the priority joins both claim indexes ahead of run_after. Not the job's own column, though:
    // waiting_priority is its priority while it waits and 0 once claimed, done or failed. So
    // expired leases stay one range (status 'claimed', 0, run_after), and the index entries of a
    // job at the default priority do not move for it when the job is claimed (see schema 4 on why
    // that counts). The old indexes go: each is a prefix of the new one's ranges plus a column.
    sql: (table) => `
      ALTER TABLE ${table}
        ADD COLUMN priority SMALLINT NOT NULL DEFAULT 0,
        ADD COLUMN waiting_priority SMALLINT AS (IF(status = 'unclaimed', priority, 0)) STORED,
        DROP INDEX status_run_after,
        DROP INDEX kind_status_run_after,
        ADD KEY status_priority_run_after (status, waiting_priority, run_after),
        ADD KEY kind_status_priority_run_after (kind, kind_status, waiting_priority, kind_run_after),
        COMMENT = '${schemaComment(6)}'`,
  },
  {
    version: 7,
    description: 'paused kinds',
    // A table of its own, shared by every queue of the database like jobq_lanes: a pause is a
    // row, read by every claim turn, so it holds for every worker and survives restarts.
    sql: (table) => `
      ${CREATE_PAUSED_KINDS_TABLE_SQL};
      ALTER TABLE ${table} COMMENT = '${schemaComment(7)}'`,
  },
  {
    version: 8,
    description: 'recurring jobs',
    // One row per schedule, shared by every queue of the database like jobq_lanes. (queue,
    // next_tick) makes "which schedules are due" a range read for every worker's ticker.
    sql: (table) => `
      ${CREATE_SCHEDULES_TABLE_SQL};
      ALTER TABLE ${table} COMMENT = '${schemaComment(8)}'`,
  },
  {
    version: 9,
    description: 'running totals of completed, failed and retried jobs',
    sql: (table) => `
      ${CREATE_COUNTERS_TABLE_SQL};
      ALTER TABLE ${table} COMMENT = '${schemaComment(9)}'`,
  },
  {
    version: 10,
    description: 'job keys of partitioned tables',
    // Made for every queue, used only by tables partitioned with `setup-tables --partitions`
    // (sql/job-keys.ts says why they need it).
    sql: (table) => `
      ${CREATE_JOB_KEYS_TABLE_SQL};
      ALTER TABLE ${table} COMMENT = '${schemaComment(10)}'`,
  },
  {
    version: 11,
    description: 'kinds and names compared exactly',
    // The server's default collation ignores case (and on MySQL accents, on both trailing spaces),
    // while handlers, pauses and schedules are looked up by exact strings: a worker for `email`
    // claimed jobs of `Email` and failed them for want of a handler, and `resume --kind Email`
    // resumed `email`. Byte-for-byte collations make them distinct kinds everywhere. Changing a
    // column to a stricter collation cannot make two rows of a unique key equal. The shared
    // tables are altered by every queue's migration; the statements are the same each time.
    sql: (table, server) => {
      const exact = (column: string, nullable = false) =>
        `MODIFY ${column} VARCHAR(64) CHARACTER SET utf8mb4 COLLATE ${exactCollation(server)} ${nullable ? 'NULL DEFAULT NULL' : 'NOT NULL'}`;
      return `
      ALTER TABLE jobq_paused_kinds ${exact('kind')};
      ALTER TABLE jobq_schedules ${exact('name')}, ${exact('kind')};
      ALTER TABLE jobq_counters ${exact('kind')};
      ALTER TABLE ${table} ${exact('kind', true)}, COMMENT = '${schemaComment(11)}'`;
    },
  },
  {
    version: 12,
    description: 'lease expiries counted apart from attempts',
    // `attempts` counts a job's runs that ended in its handler's failure (and the run in progress);
    // leases that ran out count here. Before, every claim spent an attempt: jobs that a stopping
    // worker handed back unstarted, and the batch-mates of a job that crashed its process, went
    // to `failed` without ever having run.
    sql: (table) => `
      ALTER TABLE ${table}
        ADD COLUMN lease_expiries SMALLINT UNSIGNED NOT NULL DEFAULT 0,
        COMMENT = '${schemaComment(12)}'`,
  },
  {
    version: 13,
    description: "the trace context of a job's enqueue",
    // OpenTelemetry's propagation carrier as JSON (src/tracing/job-spans.ts), NULL when the
    // application does not trace. A nullable column added last: both servers add it without
    // copying the table.
    sql: (table) => `
      ALTER TABLE ${table}
        ADD COLUMN trace_context VARCHAR(${MAX_TRACE_CONTEXT_LENGTH}) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
        COMMENT = '${schemaComment(13)}'`,
  },
  {
    version: 14,
    description: 'limits on kinds',
    // A table of its own, shared by every queue of the database like jobq_paused_kinds: a limit
    // is a row, read by every claim turn (claim/sql/limits.ts).
    sql: (table, server) => `
      ${createLimitsTableSql(server)};
      ALTER TABLE ${table} COMMENT = '${schemaComment(14)}'`,
  },
  {
    version: 15,
    description: 'groups of jobs, limits per group, rate limits',
    // A job's group (a tenant, an account), NULL for none, and the kind index with the group
    // between status and priority: each group of a kind is a range of it, its waiting jobs in
    // priority and age order, and so are the jobs of the kind without a group (claim/sql/groups.ts).
    // jobq_grouped_kinds lists the kinds whose jobs carry groups; the limits get columns per group
    // and for rates, and jobq_rate_claims logs what claims under a rate took (claim/sql/limits.ts).
    // Not an index of its own: every job would have had an entry more to write and delete, and a
    // drain of jobs without groups lost up to 9 % (bench-results/groups-index-ab.json). The kind index
    // moves on every claim anyway; its entries are one NULL wider for jobs without a group.
    sql: (table, server) => `
      ${groupAndRateLimitsSql(server)};
      ${CREATE_GROUPED_KINDS_TABLE_SQL(exactCollation(server))};
      ALTER TABLE ${table}
        ADD COLUMN job_group VARCHAR(64) CHARACTER SET utf8mb4 COLLATE ${exactCollation(server)} NULL DEFAULT NULL,
        DROP INDEX kind_status_priority_run_after,
        ADD KEY kind_status_group_priority_run_after (kind, kind_status, job_group, waiting_priority, kind_run_after),
        COMMENT = '${schemaComment(15)}'`,
  },
  {
    version: 16,
    description: 'locks per group',
    // Claims of a kind limited per group only lock its groups' rows, not the kind's, so that
    // claims of different groups go side by side (claim/sql/groups.ts).
    sql: (table, server) => `
      ${CREATE_GROUP_LOCKS_TABLE_SQL(exactCollation(server))};
      ALTER TABLE ${table} COMMENT = '${schemaComment(16)}'`,
  },
  {
    version: 17,
    description: 'counts of done and failed jobs kept, not counted',
    // jobq_counters gets the counts (claim/sql/counters.ts); setup-tables then counts them from
    // the table, as it does after every migration (queue/recount.ts).
    sql: (table) => `
      ${ADD_KEPT_COUNTS_SQL};
      ALTER TABLE ${table} COMMENT = '${schemaComment(17)}'`,
  },
  {
    version: 18,
    description: 'counts of waiting jobs kept, not counted',
    // jobq_counters gets the count, enqueues add theirs to jobq_new_jobs (sql/new-jobs.ts says
    // why); setup-tables then recounts.
    sql: (table, server) => `
      ${ADD_WAITING_COUNT_SQL};
      ${CREATE_NEW_JOBS_TABLE_SQL(exactCollation(server))};
      ALTER TABLE ${table} COMMENT = '${schemaComment(18)}'`,
  },
  {
    version: 19,
    description: 'small inserts counted later',
    // Inserts of a few jobs on the queue's own connection no longer count them in their own
    // transaction: a fold does, from a mark in jobq_fold_marks, under writers' leases in
    // jobq_uncounted_writers (sql/uncounted-jobs.ts); the recount after this migration sets the
    // mark.
    sql: (table) => `
      ${CREATE_FOLD_MARKS_TABLE_SQL};
      ${CREATE_UNCOUNTED_WRITERS_TABLE_SQL};
      ALTER TABLE ${table} COMMENT = '${schemaComment(19)}'`,
  },
  {
    version: 20,
    description: 'unique jobs, snoozes, timeouts per job',
    // A unique job's key, and while it holds (UNIQUE_SCOPES). The unique job_key index holds the
    // unique keys too: job_key becomes a column generated from the job key (now `given_key`) and
    // the unique key while it holds (sql/unique-jobs.ts), so that two enqueues of one key race to
    // the index, never to a read, on any number of connections and servers. An index of its own
    // for the unique keys cost every job an entry more to write and delete: drains without unique
    // jobs lost 8 % (bench-results/unique-index-ab.json). VIRTUAL, unlike schema 4's copies: a
    // stored job_key was the job key a second time in every row, and the drains ran 0.99x to
    // 1.05x faster without it (unique-job-key-virtual-ab.json). On a partitioned table the
    // index is not unique (sql/partitions.ts), and jobq refuses unique jobs there. `snoozes`
    // counts the times a handler put its job off (job.snooze), apart from attempts; `timeout_ms`
    // is the job's own timeout, over the worker's. jobq_unique_windows holds the keys that hold for
    // a time.
    sql: (table, _server, partitioned) => `
      ${CREATE_UNIQUE_WINDOWS_TABLE_SQL};
      ALTER TABLE ${table}
        DROP INDEX job_key,
        CHANGE job_key given_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
        ADD COLUMN snoozes SMALLINT UNSIGNED NOT NULL DEFAULT 0,
        ADD COLUMN timeout_ms INT UNSIGNED NULL DEFAULT NULL,
        ADD COLUMN unique_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
        ADD COLUMN unique_while ENUM(${UNIQUE_SCOPES.map((scope) => `'${scope}'`).join(', ')}) NULL DEFAULT NULL,
        ADD COLUMN job_key VARCHAR(65) CHARACTER SET ascii COLLATE ascii_bin AS (${JOB_KEY_SQL}) VIRTUAL,
        ADD ${partitioned ? 'KEY' : 'UNIQUE KEY'} job_key (job_key),
        COMMENT = '${schemaComment(20)}'`,
  },
  {
    version: 21,
    description: 'cancelled jobs, cancels of running jobs, results, progress, errors of every attempt',
    // `cancelled` ends a job's life like `failed`, and is counted and pruned like it. A job that a
    // worker holds is not cancelled under it: `cancel_requested_at` marks it, and the worker that
    // holds it sees the mark and aborts its handler (worker/cancel-watch.ts). `result` is what
    // the handler returned, kept with a done job (`keepResults`, `keepDone`); `progress` what it
    // last reported (`job.progress`); `errors` the latest errors of its attempts, with the first
    // lines of their stacks. A value added at the end of an ENUM: MySQL changes the definition
    // only; MariaDB copies the table once. The new columns are nullable, added last.
    sql: (table) => `
      ${ADD_CANCELLED_COUNT_SQL};
      ALTER TABLE ${table}
        MODIFY status ENUM(${jobStatusList(5)}) NOT NULL DEFAULT 'unclaimed',
        MODIFY kind_status ENUM(${jobStatusList(5)}) AS (IF(kind IS NULL, NULL, status)) STORED,
        ADD COLUMN cancel_requested_at TIMESTAMP(6) NULL DEFAULT NULL,
        ADD COLUMN result JSON NULL DEFAULT NULL,
        ADD COLUMN progress JSON NULL DEFAULT NULL,
        ADD COLUMN errors JSON NULL DEFAULT NULL,
        COMMENT = '${schemaComment(21)}'`,
  },
  {
    version: 22,
    description: 'jobs due later scheduled apart from waiting ones',
    // `scheduled`: a waiting job not due yet, which claims no longer walk past (claim/sql/
    // scheduled.ts says why and how it becomes `unclaimed`). The unique keys that hold while a
    // job waits hold while it is scheduled too. A value added at the end of the ENUM, as in schema
    // 21. The waiting jobs due later move to it before the version is set: a migration cut off
    // between them runs again.
    sql: (table) => `
      ALTER TABLE ${table}
        MODIFY status ENUM(${jobStatusList(6)}) NOT NULL DEFAULT 'unclaimed',
        MODIFY kind_status ENUM(${jobStatusList(6)}) AS (IF(kind IS NULL, NULL, status)) STORED,
        MODIFY job_key VARCHAR(65) CHARACTER SET ascii COLLATE ascii_bin AS (${JOB_KEY_SQL}) VIRTUAL;
      UPDATE ${table} SET status = 'scheduled' WHERE status = 'unclaimed' AND run_after > NOW(6);
      ALTER TABLE ${table} COMMENT = '${schemaComment(22)}'`,
  },
  {
    version: 23,
    description: "JSON columns without MariaDB's check",
    // MariaDB's JSON is a LONGTEXT with CHECK (json_valid(...)), and MariaDB evaluates a table's
    // checks at every UPDATE of a row, whatever columns it sets: every claim, retry and settle
    // parsed the job's payload again (a 128 KiB payload cost 1.3-1.7 ms more per UPDATE; 100,000 jobs
    // of 2 KB drained 1.07x faster without the checks: bench-results/json-unchecked-mariadb.json).
    // jobq writes only JSON it made itself (JSON.stringify, JSON_ARRAY_APPEND), so on MariaDB the
    // columns become the same LONGTEXT without the check, which MariaDB does by copying the table
    // once. MySQL's JSON is a type of its own that an UPDATE of other columns does not check
    // (as text it drained 2 KB payloads no faster: bench-results/json-as-text-mysql-tried.json).
    sql: (table, server) => `
      ALTER TABLE ${table}
        ${server.flavor === 'MariaDB' ? UNCHECKED_JSON_COLUMNS.map((column) => `MODIFY ${column} LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL DEFAULT NULL,`).join('\n        ') : ''}
        COMMENT = '${schemaComment(23)}'`,
  },
];

export const CURRENT_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Reads the table's comment and columns; no row means no table. */
export const TABLE_INFO_SQL = `
  SELECT t.TABLE_COMMENT AS comment,
         GROUP_CONCAT(c.COLUMN_NAME ORDER BY c.ORDINAL_POSITION) AS columns
    FROM information_schema.TABLES AS t
    JOIN information_schema.COLUMNS AS c
      ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME
   WHERE t.TABLE_SCHEMA = ? AND t.TABLE_NAME = ?
   GROUP BY t.TABLE_COMMENT`;

export const CREATE_DATABASE_SQL = (database: string) => `CREATE DATABASE IF NOT EXISTS ${database}`;
export const DROP_TABLE_SQL = (table: QuotedIdentifier) => `DROP TABLE IF EXISTS ${table}`;
export const COUNT_ROWS_SQL = (table: QuotedIdentifier) => `SELECT COUNT(*) AS count FROM ${table}`;
