import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of the test server, for outages without touching the server: `cut()` drops
 * every connection and refuses new ones, as a server that went away does; `restore()` listens on
 * the same port again.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  /** `serverUrl`: `mysql://user:password@host:port` of the server behind the proxy. */
  constructor(private readonly serverUrl: string) {}

  private get target(): { host: string; port: number } {
    const { hostname, port } = new URL(this.serverUrl);
    return { host: hostname, port: Number(port || 3306) };
  }

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Drops every connection and stops listening. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  }

  /** Listens again, on the same port (nothing to do when it still listens). */
  async restore(): Promise<void> {
    if (this.server === undefined) await this.start();
  }

  /** A URL to `database` through the proxy, with the server URL's user and password. */
  url(database: string): string {
    const url = new URL(this.serverUrl);
    url.host = `127.0.0.1:${this.port}`;
    url.pathname = `/${database}`;
    return url.toString();
  }
}
