import type { QuotedIdentifier } from '../../config/identifiers.js';

/**
 * While a unique job's key holds, as the `unique_while` column stores it: `waiting`, until the job
 * is first claimed; `active`, until it is done or failed; `stored`, while its row exists;
 * `debounce`, as `waiting`, and an enqueue of the key replaces the waiting job's payload and run
 * time instead of leaving it be.
 */
export const UNIQUE_SCOPES = ['waiting', 'active', 'stored', 'debounce'] as const;
export type UniqueScope = (typeof UNIQUE_SCOPES)[number];

/** The key while it holds, else NULL: the expression of the generated unique_holder column (schema 20). */
export const UNIQUE_HOLDER_SQL = `CASE unique_while
      WHEN 'stored' THEN unique_key
      WHEN 'active' THEN IF(status IN ('unclaimed', 'claimed'), unique_key, NULL)
      ELSE IF(status = 'unclaimed' AND owner_date = created_at, unique_key, NULL) END`;

/**
 * What an insert that meets a held key does to the job holding it, after the ON DUPLICATE KEY
 * UPDATE of the insert: nothing, unless the new job debounces and the holder waits with the same
 * unique key; then the holder takes the new payload and run time (the status and key, read by
 * the conditions, are not among the columns set).
 */
export const DEBOUNCE_UPDATES_SQL = `,
    payload = IF(VALUES(unique_while) = 'debounce' AND status = 'unclaimed' AND unique_key = VALUES(unique_key), VALUES(payload), payload),
    run_after = IF(VALUES(unique_while) = 'debounce' AND status = 'unclaimed' AND unique_key = VALUES(unique_key), VALUES(run_after), run_after)`;

/** The jobs that hold these unique keys now. Params: [keys]. */
export const JOBS_BY_UNIQUE_KEY_SQL = (table: QuotedIdentifier) => `
  SELECT unique_holder AS unique_key, id FROM ${table} FORCE INDEX (unique_holder) WHERE unique_holder IN (?)`;
