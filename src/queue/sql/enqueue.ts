/**
 * Inserting jobs, many rows per statement (one round trip and one commit per batch).
 * `job_key` is unique and made by the client: when a connection drops during the COMMIT, the
 * outcome is unknown, and the writer sends the same batch again; rows that did land are matched
 * by their key and left as they are (`id = id` changes nothing), so nothing is duplicated.
 * Params: [[job_key, d, e], ...].
 */
export const INSERT_JOBS_SQL = (table: string) => `
  INSERT INTO ${table} (job_key, d, e) VALUES ?
  ON DUPLICATE KEY UPDATE id = id`;
