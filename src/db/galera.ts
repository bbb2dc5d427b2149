import { ExitCode } from '../errors.js';
import { ServerNotUsableError } from './server-errors.js';

/**
 * What a Galera node says of itself. jobq works on a Galera cluster as on one server, with two
 * differences it must respect: row locks (SKIP LOCKED's included) are local to a node, so two
 * nodes can claim the same job and the loser learns it only at COMMIT, as error 1213 (handled as
 * a deadlock: rolled back, run again, counted); and a node that is not Synced, or not in the
 * Primary component, must not be used at all.
 */
export interface GaleraNode {
  /** wsrep_local_state_comment: Synced, Donor/Desynced, Joining, Joined, ... */
  state: string;
  /** wsrep_cluster_status: Primary, or non-Primary when this node lost the majority. */
  clusterStatus: string;
  clusterSize: number;
}

/**
 * Sent with SELECT VERSION() when connecting. SHOW ... LIKE and WHERE work on MySQL (which has
 * no wsrep variables: no rows) and on MariaDB (wsrep_on is OFF unless Galera runs).
 */
export const GALERA_PROBE_SQL = [
  "SHOW GLOBAL VARIABLES LIKE 'wsrep\\_on'",
  "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_status', 'wsrep_cluster_size')",
];

type VariableRow = { Variable_name: string; Value: string };

/** The node's state from the answers to GALERA_PROBE_SQL; undefined when the server is no Galera node. */
export function galeraNodeFrom(variables: readonly VariableRow[], status: readonly VariableRow[]): GaleraNode | undefined {
  if (variables[0]?.Value?.toUpperCase() !== 'ON') return undefined;
  const value = (name: string) => status.find((row) => row.Variable_name.toLowerCase() === name)?.Value ?? '';
  return { state: value('wsrep_local_state_comment'), clusterStatus: value('wsrep_cluster_status'), clusterSize: Number(value('wsrep_cluster_size')) };
}

/** The node's state now, for `stats`; undefined on a server without Galera. */
export async function readGaleraNode(query: (sql: string) => Promise<unknown>): Promise<GaleraNode | undefined> {
  const [variables, status] = (await query(GALERA_PROBE_SQL.join(';\n'))) as [VariableRow[], VariableRow[]];
  return galeraNodeFrom(variables, status);
}

/** A Galera node jobq will not use. */
export class NodeNotSyncedError extends ServerNotUsableError {
  constructor(where: string, node: GaleraNode) {
    super(
      `the Galera node at ${where} is ${node.state || 'in an unknown state'} in a ${node.clusterStatus || 'unknown'} component, not Synced in the Primary one; ` +
        'wait for it to sync, or list other nodes in --database-url (host1:3306,host2:3306)',
      ExitCode.connection,
    );
  }
}

export function assertNodeUsable(node: GaleraNode | undefined, where: string): void {
  if (node !== undefined && (node.state !== 'Synced' || node.clusterStatus !== 'Primary')) throw new NodeNotSyncedError(where, node);
}
