import { ExitCode, JobqError } from '../errors.js';
import { checkNumber, OPTIONS } from '../config/options.js';
import type { ClaimOptions } from './types.js';

/** A claim's options checked (the rules of src/config/options.ts), with the lease in microseconds; a one-line error for a bad value. */
export function checkClaimOptions(options: ClaimOptions): { batchSize: number; leaseMicroseconds: number; ownerId: number } {
  const { lane } = options;
  if (lane !== undefined && !(Number.isInteger(lane.count) && lane.count >= 1 && Number.isInteger(lane.index) && lane.index >= 0 && lane.index < lane.count)) {
    throw new JobqError(`lane must have a whole count >= 1 and an index from 0 to count - 1, not ${JSON.stringify(lane)}`, ExitCode.usage);
  }
  return {
    batchSize: checkNumber(OPTIONS.batchSize, options.batchSize),
    leaseMicroseconds: Math.round(checkNumber(OPTIONS.leaseSeconds, options.leaseSeconds) * 1e6),
    ownerId: options.ownerId ?? 0,
  };
}
