/**
 * Claiming: the article's two steps. First find candidate ids with a plain read that locks
 * nothing; then, in a short READ COMMITTED transaction, lock those of them that are still free
 * with `FOR UPDATE SKIP LOCKED` by primary key, and mark them claimed by a fresh token.
 *
 * Every statement that locks or writes names its rows by primary key with FORCE INDEX (PRIMARY):
 * on a young table with stale statistics the optimizer has been seen to plan `WHERE id IN (...)`
 * as a full scan, which at REPEATABLE READ locked hundreds of rows and deadlocked with inserts.
 *
 * Candidate queries come in two shapes: over the whole queue, on (status, run_after), or over
 * one kind of job (`work --kind`), on (kind, status, run_after). Either way every part is an
 * index range read in index order that stops after LIMIT matching entries, however long the
 * queue is.
 */

// Spreading consumers over lanes (`id MOD lanes = lane`) so that they do not all fight over the
// head of the queue. Measured with `npm run bench` (100,000 queued jobs, batch 100, 2 cores,
// MariaDB 10.11): with every consumer reading the same oldest 100 ids, 10 consumers drained
// 2,900 jobs/s with 95 % empty claims (one wins each round, nine find their candidates locked);
// with the article's random first letter, 11,600 jobs/s with 23 % empty claims; with lanes,
// 3 % empty claims, only the tail of a drain being contended. The lane filter is checked on the
// index entries themselves (InnoDB secondary indexes carry the primary key): no row lookups.
// Supervised consumers get their lane with each claim turn (see ClaimGate), other callers choose.
// A lane nobody claims from for a while is not stranded: once a job has waited longer than the
// steal delay, any claim that finds its own lane empty takes it (candidatesStaleSql).

/**
 * Which index a candidate query reads, and the columns it filters on there. The kind index holds
 * copies of status and run_after that are set only for jobs with a kind (see schema 4).
 */
const scope = (byKind: boolean) =>
  byKind
    ? { index: 'kind_status_run_after', kind: 'kind = ? AND ', status: 'kind_status', runAfter: 'kind_run_after' }
    : { index: 'status_run_after', kind: '', status: 'status', runAfter: 'run_after' };

/** `[kind = ? AND] status = '<status>' AND run_after <= NOW(6)[ - slack]`, on the scope's columns. */
const dueIn = (byKind: boolean, status: 'unclaimed' | 'claimed', slack = '') => {
  const { kind, status: statusColumn, runAfter } = scope(byKind);
  return `${kind}${statusColumn} = '${status}' AND ${runAfter} <= NOW(6)${slack}`;
};

/** A job may be handed out when it is waiting and due, or claimed with its lease run out. */
const CLAIMABLE = `status IN ('unclaimed', 'claimed') AND run_after <= NOW(6)`;

/** Params: [kind,] limit. */
const expiredLeases = (table: string, byKind: boolean) => `
  (SELECT id FROM ${table} FORCE INDEX (${scope(byKind).index})
    WHERE ${dueIn(byKind, 'claimed')}
    ORDER BY ${scope(byKind).runAfter}, id LIMIT ?)`;

/** Params: [kind,] lanes, lane, limit. */
const oldestWaitingInLane = (table: string, byKind: boolean) => `
  (SELECT id FROM ${table} FORCE INDEX (${scope(byKind).index})
    WHERE ${dueIn(byKind, 'unclaimed')} AND id MOD ? = ?
    ORDER BY ${scope(byKind).runAfter}, id LIMIT ?)`;

/**
 * Candidate ids, oldest first, from the consumer's lane; expired leases (the oldest work there is)
 * first. Params: [kind,] limit, [kind,] lanes, lane, limit, limit.
 */
export const candidatesOldestSql = (table: string, byKind: boolean) => `
  ${expiredLeases(table, byKind)}
  UNION ALL
  ${oldestWaitingInLane(table, byKind)}
  LIMIT ?`;

/**
 * The article's pick: waiting jobs of the consumer's lane whose `d` starts with a given letter, a
 * range on (status, d); topped up with the lane's oldest waiting jobs in the same round trip, so
 * that an unlucky letter never leaves a consumer idle while work waits. UNION drops ids found twice.
 * Params: limit, 'x%', lanes, lane, limit, lanes, lane, limit, limit.
 */
export const candidatesPrefixSql = (table: string) => `
  ${expiredLeases(table, false)}
  UNION
  (SELECT id FROM ${table} FORCE INDEX (status_d)
    WHERE status = 'unclaimed' AND d LIKE ? AND run_after <= NOW(6) AND id MOD ? = ?
    LIMIT ?)
  UNION
  ${oldestWaitingInLane(table, false)}
  LIMIT ?`;

/**
 * Any lane's jobs that have waited past the steal delay: what a consumer whose own lane is empty
 * takes over from a busy or dead one. A second round trip, but only when the lane was empty: in a
 * drain every job is "stale", and reading this range on every claim cost 15 % of the throughput.
 * Params: [kind,] steal delay in microseconds, limit.
 */
export const candidatesStaleSql = (table: string, byKind: boolean) => `
  SELECT id FROM ${table} FORCE INDEX (${scope(byKind).index})
   WHERE ${dueIn(byKind, 'unclaimed', ' - INTERVAL ? MICROSECOND')}
   ORDER BY ${scope(byKind).runAfter}, id LIMIT ?`;

/**
 * Locks those candidates nobody else holds and that are still claimable (re-checked on the
 * latest committed row, under the lock). SKIP LOCKED never waits: rows another consumer is
 * claiming right now are simply left out. The payload comes as JSON text from both servers (MySQL
 * would otherwise send its JSON type pre-parsed, MariaDB its LONGTEXT as text). Params: [ids].
 */
export const LOCK_CANDIDATES_SQL = (table: string) => `
  SELECT id, kind, CAST(payload AS CHAR) AS payload, d, e, attempts FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id IN (?) AND ${CLAIMABLE}
   FOR UPDATE SKIP LOCKED`;

/**
 * Marks locked rows as ours until the lease ends; every claim counts an attempt.
 * Params: owner id, claim token, lease in microseconds, [ids].
 */
export const MARK_CLAIMED_SQL = (table: string) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET status = 'claimed', owner_id = ?, owner_date = NOW(6), claim_token = ?,
         run_after = NOW(6) + INTERVAL ? MICROSECOND, attempts = attempts + 1
   WHERE id IN (?)`;

/**
 * Locked rows that have used up their attempts (their last lease ran out) stop here.
 * Params: [ids].
 */
export const MARK_FAILED_SQL = (table: string) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET status = 'failed', claim_token = DEFAULT,
         last_error = COALESCE(last_error, 'lease expired on every attempt')
   WHERE id IN (?)`;

/** Which of these rows a claim token holds: did a COMMIT cut off by a lost connection go through? Params: [ids], token. */
export const OWNED_BY_TOKEN_SQL = (table: string) => `
  SELECT id FROM ${table} FORCE INDEX (PRIMARY) WHERE id IN (?) AND claim_token = ?`;

/** Is there work due now (or, with `includeDelayed`, at all)? For --until-empty and --once. Params: none. */
export const HAS_PENDING_WORK_SQL = (table: string, includeDelayed: boolean) => `
  SELECT EXISTS (SELECT 1 FROM ${table} FORCE INDEX (status_run_after) WHERE status = 'claimed')
      OR EXISTS (SELECT 1 FROM ${table} FORCE INDEX (status_run_after)
                  WHERE status = 'unclaimed'${includeDelayed ? '' : ' AND run_after <= NOW(6)'}) AS pending`;
