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

/**
 * The statements the server ran for `user` while `during` ran, from its general query log, kept in
 * a table for that while (then set back as it was). The log is the whole server's: files that
 * use this helper run alone.
 */
export async function statementsOf(connection: mysql.Connection, user: string, during: (logged: () => Promise<string[]>) => Promise<void>): Promise<string[]> {
  const [[before]] = (await connection.query('SELECT @@global.general_log AS enabled, @@global.log_output AS output')) as unknown as [[{ enabled: number; output: string }]];
  const logged = async () => {
    const [rows] = await connection.query("SELECT CAST(argument AS CHAR) AS statement FROM mysql.general_log WHERE command_type = 'Query' AND user_host LIKE ?", [`${user}[%`]);
    return (rows as Array<{ statement: string }>).map((row) => row.statement);
  };
  await connection.query('SET GLOBAL general_log = 0');
  await connection.query('TRUNCATE TABLE mysql.general_log');
  await connection.query("SET GLOBAL log_output = 'TABLE'");
  await connection.query('SET GLOBAL general_log = 1');
  try {
    await during(logged);
    return await logged();
  } finally {
    await connection.query('SET GLOBAL general_log = 0');
    await connection.query('SET GLOBAL log_output = ?', [before.output]);
    await connection.query('SET GLOBAL general_log = ?', [Number(before.enabled)]);
  }
}
