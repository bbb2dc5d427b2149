import { once } from 'node:events';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExitCode, JobqError } from '../errors.js';

/** An answer with a status and a one-line message, sent as `{ "error": ... }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function setSecurityHeaders(response: ServerResponse): void {
  // Scripts and styles from this server only, no inline script: a payload that gets into the page
  // as markup still could not run.
  response.setHeader('Content-Security-Policy', "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'");
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('X-Frame-Options', 'DENY');
  // same-origin, not no-referrer: under no-referrer the browser sends `Origin: null` with the page's own
  // form POSTs, and the Origin check (access.ts) could not tell them from another site's.
  response.setHeader('Referrer-Policy', 'same-origin');
  response.setHeader('Cache-Control', 'no-store');
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return void response.end();
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify(body));
}

/** Listens, or throws one line saying why the address cannot be used; returns the URL (the port chosen, for port 0). */
export async function listen(server: Server, host: string, port: number): Promise<string> {
  server.listen(port, host);
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([error]) => {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'EADDRINUSE' ? 'is in use; pick another port' : code === 'EADDRNOTAVAIL' ? 'is not an address of this machine' : `cannot be used (${code})`;
      throw new JobqError(`${host}:${port} ${why}`, ExitCode.usage);
    }),
  ]);
  const { port: listening } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${listening}`;
}
