import { startingWithServer } from '../config/database-url.js';
import type { ChildConfig, ChildConnection } from './messages.js';

/** One child process of a supervised run: the script it runs and the configuration it is sent. */
export interface ChildSpec {
  /** How the child is named in lines: "consumer 3", "worker 2". */
  name: string;
  /** The compiled script the child runs. */
  script: string;
  config: ChildConfig;
  /**
   * The child inserts jobs (and reports them as 'inserted'): its ending by itself is no crash,
   * and `--until-empty` waits for every producer to have ended.
   */
  producer?: boolean;
}

/**
 * The connection of child `number` (from 1): when the URL lists several servers (the nodes of a
 * Galera cluster), children take turns at which one they try first, so that they spread over all
 * of them; the rest of the list is where each goes when its node is lost.
 */
export function childConnection(connection: ChildConnection, number: number): ChildConnection {
  return { ...connection, url: startingWithServer(connection.url, number - 1) };
}

/** Child `number`'s share (from 1) of `total` jobs among `count` producers; undefined when there is no total. */
export function shareOf(total: number | undefined, count: number, number: number): number | undefined {
  return total === undefined ? undefined : Math.floor(total / count) + (number <= total % count ? 1 : 0);
}
