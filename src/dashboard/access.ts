import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { ExitCode, JobqError } from '../errors.js';

export const SESSION_COOKIE = 'jobq_session';

/** Where the dashboard's and the workers' metrics token may come from instead of a flag (`ps` shows flags). */
export const DASHBOARD_TOKEN_ENV = 'JOBQ_DASHBOARD_TOKEN';

/** The token in the environment, if one is set. */
export const tokenFromEnv = (): string | undefined => process.env[DASHBOARD_TOKEN_ENV] || undefined;

/** Addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** Addresses that mean every address of the machine. */
const WILDCARDS = new Set(['0.0.0.0', '::', '']);

/**
 * Who may use the dashboard. Without a token it listens on this machine only and lets anyone in
 * there; with one, every request must carry it: the API and /metrics in an `Authorization:
 * Bearer` header, pages by a session cookie set by the login form. Every POST also needs the
 * anti-CSRF value that the page carries, with or without a token: a page of another site that
 * the operator's browser opens must not be able to requeue or cancel jobs on 127.0.0.1.
 *
 * Every request must also name this server in its Host header (the address it listens on, or
 * localhost), and every POST that says where it comes from must come from this server's own page.
 * Otherwise a page whose host name an attacker re-points at 127.0.0.1 (DNS rebinding) would be
 * same-origin with the dashboard in the operator's browser, and could read the page, its
 * anti-CSRF value and the failed jobs' payloads. On a wildcard address (0.0.0.0, which needs a
 * token) the names the machine is reached by are not known: the token guards it there.
 */
export class Access {
  private readonly secret: Buffer;
  readonly csrf: string;
  private readonly session: string | undefined;
  /** The host names requests may use; undefined: any (a wildcard address). */
  private readonly hostNames: ReadonlySet<string> | undefined;

  /** `howToGive`: where the user sets the token, for the error when it is missing. */
  constructor(
    private readonly token: string | undefined,
    host: string,
    howToGive = '--token (or JOBQ_DASHBOARD_TOKEN)',
  ) {
    if (token !== undefined && token.length < 16) {
      throw new JobqError('a dashboard token must be at least 16 characters; make one with: openssl rand -hex 24', ExitCode.usage);
    }
    if (token === undefined && !isLoopback(host)) {
      throw new JobqError(
        `other machines can reach ${host}: listening there needs ${howToGive}, since the queue's data is shown (the default, 127.0.0.1, needs none)`,
        ExitCode.usage,
      );
    }
    // Derived values, so that neither the token nor the secret itself ever reaches a page.
    this.secret = token === undefined ? randomBytes(32) : Buffer.from(token);
    this.csrf = createHmac('sha256', this.secret).update('csrf').digest('base64url');
    this.session = token === undefined ? undefined : createHmac('sha256', this.secret).update('session').digest('base64url');
    this.hostNames = WILDCARDS.has(host) ? undefined : new Set([host.includes(':') ? `[${host}]` : host, 'localhost']);
  }

  /** The Host header names this server; a request that names another is refused before anything else. */
  servesHost(request: IncomingMessage): boolean {
    const name = hostOf(request.headers.host);
    return name !== undefined && (this.hostNames === undefined || this.hostNames.has(name.hostname));
  }

  /** A request's Origin, when it sends one, is this server's own (same host and port as the Host header). */
  originMatches(request: IncomingMessage): boolean {
    const origin = request.headers.origin;
    if (origin === undefined) return true; // not from a browser's page: curl, scripts
    try {
      return new URL(origin).host === hostOf(request.headers.host)?.host;
    } catch {
      return false; // "null" and other opaque origins
    }
  }

  /** What a request refused by servesHost is told. */
  get hostNamesText(): string {
    return this.hostNames === undefined ? 'any host name' : [...this.hostNames].join(' and ');
  }

  get needsLogin(): boolean {
    return this.token !== undefined;
  }

  /** The request carries the token (as a bearer header) or the session cookie; always true without a token. */
  allows(request: IncomingMessage): boolean {
    if (this.token === undefined) return true;
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (bearer !== undefined && same(bearer, this.token)) return true;
    const cookie = parseCookies(request.headers.cookie)[SESSION_COOKIE];
    return cookie !== undefined && same(cookie, this.session!);
  }

  /** The token typed into the login form is the right one. */
  acceptsLogin(token: string): boolean {
    return this.token !== undefined && same(token, this.token);
  }

  /** The Set-Cookie value after a good login: HttpOnly (no script reads it), SameSite=Strict (no other site sends it). */
  sessionCookie(): string {
    return `${SESSION_COOKIE}=${this.session}; HttpOnly; SameSite=Strict; Path=/`;
  }

  /** A POST carries the anti-CSRF value in its `X-CSRF-Token` header (the login form: in its body). */
  csrfMatches(value: string | undefined): boolean {
    return value !== undefined && same(value, this.csrf);
  }
}

/** The host of a Host header, as a URL reads it (`[::1]` for IPv6); undefined when there is none or it is malformed. */
function hostOf(header: string | undefined): { hostname: string; host: string } | undefined {
  if (header === undefined || header === '' || /[/?#@\s]/.test(header)) return undefined;
  try {
    const { hostname, host } = new URL(`http://${header}`);
    return { hostname, host };
  } catch {
    return undefined;
  }
}

function same(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) cookies[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return cookies;
}
