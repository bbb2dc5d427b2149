import { ExitCode, JobqError } from '../errors.js';

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/**
 * A length of time as people write it: `500ms`, `90s`, `15m`, `12h`, `7d`, `2w`, or a number of seconds.
 * Throws one line naming `what` when it is anything else.
 */
export function parseDuration(value: string | number, what: string): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value >= 0) return value;
  } else {
    const match = /^(\d+(?:\.\d+)?)(ms|[smhdw])?$/.exec(value.trim());
    if (match !== null) return Number(match[1]) * UNIT_SECONDS[match[2] ?? 's']!;
  }
  throw new JobqError(`${what} must be a length of time like 90s, 15m, 12h, 7d or 2w, not ${JSON.stringify(value)}`, ExitCode.usage);
}
