import { ExitCode } from '../errors.js';

/**
 * Ctrl-C and SIGTERM while a run is in the foreground: the first stops it gracefully, the second
 * gives up at once (exit 130). Returns the function that removes the handlers.
 */
export function onInterrupts(gracefully: (signal: NodeJS.Signals) => void, atOnce: (signal: NodeJS.Signals) => void): () => void {
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts === 1) {
      gracefully(signal);
    } else {
      atOnce(signal);
      process.exit(ExitCode.interrupted);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  };
}
