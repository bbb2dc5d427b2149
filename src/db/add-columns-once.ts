/**
 * An ALTER TABLE that adds columns to a table shared by every queue of the database, run by the
 * migration of each queue's table: only the first finds `probe` missing and alters; the others
 * do nothing. MySQL has no `ADD COLUMN IF NOT EXISTS` (MariaDB has), so the statement is chosen
 * by a read of information_schema and run as a prepared statement.
 */
export const addColumnsOnceSql = (table: string, probe: string, alterations: string) => `
  SET @jobq_alter = IF((SELECT COUNT(*) FROM information_schema.COLUMNS
                         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '${table}' AND COLUMN_NAME = '${probe}') = 0,
    'ALTER TABLE ${table} ${alterations}',
    'DO 0');
  PREPARE jobq_alter FROM @jobq_alter;
  EXECUTE jobq_alter;
  DEALLOCATE PREPARE jobq_alter`;
