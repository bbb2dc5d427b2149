/** What a connection reports while it keeps a connection alive. */
export type ConnectionEvent =
  | { state: 'lost'; error: Error }
  | { state: 'restored'; downMs: number }
  /** The connection was lost and the next server of the URL took over (a Galera node went away). */
  | { state: 'moved'; error: Error; from: string; to: string }
  | ReplicaEvent;

/** Candidates come from the primary while the replica cannot be used (bypassed), or from the replica again. */
export type ReplicaEvent = { state: 'replica-bypassed' | 'replica-used'; detail: string };

/** What a connection event says in a line: the error that began an outage, how long it lasted, or where the connection went. */
export function connectionEventDetail(event: ConnectionEvent): string {
  switch (event.state) {
    case 'lost':
      return event.error.message;
    case 'restored':
      return `after ${(event.downMs / 1000).toFixed(1)} s`;
    case 'moved':
      return `from ${event.from} (${event.error.message}) to ${event.to}`;
    case 'replica-bypassed':
    case 'replica-used':
      return event.detail;
  }
}

