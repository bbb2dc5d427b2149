import type mysql from 'mysql2/promise';

/**
 * Deadlocks InnoDB has counted since the server started: MariaDB's Innodb_deadlocks status
 * variable, or where there is none (MySQL) the lock_deadlocks metric, which MySQL keeps by default.
 */
export async function deadlocksSoFar(connection: mysql.Connection): Promise<number> {
  const [status] = await connection.query("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'");
  const variable = (status as Array<{ Value: string }>)[0];
  if (variable !== undefined) return Number(variable.Value);
  const [metric] = await connection.query("SELECT `COUNT` AS n FROM information_schema.INNODB_METRICS WHERE NAME = 'lock_deadlocks'");
  return Number((metric as Array<{ n: number }>)[0]?.n ?? NaN);
}
