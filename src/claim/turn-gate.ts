import type { Lane } from './types.js';

/**
 * How a claim turn gets its lane. Two claims reading the same candidates at the same time cost
 * one of them an empty claim; too many claims at once cost the server more CPU per job than
 * they claim (claim-gate.ts says how much).
 * Every gate therefore hands out at most `lanes` turns at once, each with a lane of its own.
 */
export interface TurnGate {
  /** Waits until this claim loop may start a turn. */
  enter(): Promise<TurnTicket>;
}

export interface TurnTicket {
  /** A lane handed over with the turn (the supervisor's gate). */
  lane?: Lane;
  /** Lock a row of jobq_lanes in the claim's own transaction instead, trying this lane first. */
  laneRow?: { queue: string; lanes: number; first: number };
  /** Ends the turn; `lane` is the lane the claim read from, when it had one. */
  leave(lane: number | undefined): void;
}

/**
 * Lanes as rows of jobq_lanes: the server coordinates every worker of the queue, on any number
 * of machines, with no parent process. Each loop starts at its own lane and moves one lane on per
 * turn, so a loop alone still visits every lane and no job waits for a lane nobody reads.
 */
export class LaneRowGate implements TurnGate {
  private next: number;

  constructor(
    private readonly queue: string,
    private readonly lanes: number,
    firstLane: number,
  ) {
    this.next = firstLane % lanes;
  }

  async enter(): Promise<TurnTicket> {
    return {
      laneRow: { queue: this.queue, lanes: this.lanes, first: this.next },
      leave: (lane) => {
        this.next = ((lane ?? this.next) + 1) % this.lanes;
      },
    };
  }
}

/** No coordination: the claim reads the whole queue (one claimer alone, or a queue without lanes). */
export const OPEN_GATE: TurnGate = {
  enter: async () => ({ leave: () => undefined }),
};
