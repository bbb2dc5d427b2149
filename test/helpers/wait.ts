import { setTimeout as sleep } from 'node:timers/promises';

/** Resolves once `condition` holds, checking every `everyMs`; fails with `what` after `timeoutMs`. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, { timeoutMs = 30_000, everyMs = 50 } = {}): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(everyMs);
  }
}
