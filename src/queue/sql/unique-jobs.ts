import type { QuotedIdentifier } from '../../config/identifiers.js';

/**
 * While a unique job's key holds, as the `unique_while` column stores it: `waiting`, until the job
 * is first claimed; `active`, until it is done or failed; `stored`, while its row exists;
 * `debounce`, as `waiting`, and an enqueue of the key replaces the waiting job's payload and run
 * time instead of leaving it be.
 */
export const UNIQUE_SCOPES = ['waiting', 'active', 'stored', 'debounce'] as const;
export type UniqueScope = (typeof UNIQUE_SCOPES)[number];

/**
 * A unique key as the job_key index holds it: behind a space, which no job key may hold, so that
 * unique keys and job keys never meet.
 */
export const heldUniqueKey = (key: string): string => ` ${key}`;

/**
 * The expression of the generated job_key column (schema 20): the job's unique key while it
 * holds (behind a space), else its job key (`given_key`). A job that was never claimed is told by
 * its owner_date, which its insert sets to its created_at and every claim moves for good.
 */
export const JOB_KEY_SQL = `IF(unique_key IS NOT NULL AND CASE unique_while
        WHEN 'stored' THEN TRUE
        WHEN 'active' THEN status IN ('unclaimed', 'claimed')
        ELSE status = 'unclaimed' AND owner_date = created_at END,
      CONCAT(' ', unique_key), given_key)`;

/**
 * What an insert that meets a held key does to the job holding it, after the ON DUPLICATE KEY
 * UPDATE of the insert: nothing, unless the new job debounces and the holder waits with the same
 * unique key; then the holder takes the new payload and run time (the status and key, read by
 * the conditions, are not among the columns set).
 */
export const DEBOUNCE_UPDATES_SQL = `,
    payload = IF(VALUES(unique_while) = 'debounce' AND status = 'unclaimed' AND unique_key = VALUES(unique_key), VALUES(payload), payload),
    run_after = IF(VALUES(unique_while) = 'debounce' AND status = 'unclaimed' AND unique_key = VALUES(unique_key), VALUES(run_after), run_after)`;

/** The jobs that hold these unique keys now. Params: [keys, each heldUniqueKey]. */
export const JOBS_BY_UNIQUE_KEY_SQL = (table: QuotedIdentifier) => `
  SELECT unique_key, id FROM ${table} FORCE INDEX (job_key) WHERE job_key IN (?)`;
