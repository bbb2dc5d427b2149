import { ExitCode, JobqError } from '../errors.js';
import { unstorableJson } from '../queue/json-text.js';

/** The most JSON a handler's result may be kept as, and a progress report. */
export const MAX_RESULT_BYTES = 64 * 1024;
export const MAX_PROGRESS_BYTES = 4 * 1024;

/**
 * The JSON text a handler's value is kept as (`what`: its result, or a progress report), or a
 * one-line error saying why it cannot be: not JSON, larger than `maxBytes`, or JSON the servers
 * refuse. Undefined stays undefined: nothing to keep.
 */
export function keptJson(value: unknown, what: string, maxBytes: number): string | undefined {
  if (value === undefined) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new JobqError(`${what} is not JSON (${error instanceof Error ? error.message : String(error)}): return plain objects, arrays, strings, numbers, booleans or null`, ExitCode.usage);
  }
  if (text === undefined) throw new JobqError(`${what} is not JSON (a ${typeof value}): return plain objects, arrays, strings, numbers, booleans or null`, ExitCode.usage);
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBytes) throw new JobqError(`${what} is ${bytes} bytes of JSON, over the ${maxBytes} kept: keep large data elsewhere and return where it is`, ExitCode.usage);
  const problem = unstorableJson(text);
  if (problem !== undefined) throw new JobqError(`${what} cannot be stored: ${problem}`, ExitCode.usage);
  return text;
}
