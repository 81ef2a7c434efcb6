import { performance } from 'node:perf_hooks'

/** A clock in seconds (fractional). Budgets read it once per request. */
export type Clock = () => number

/** A clock that only moves when told to: exact arithmetic for tests, proofs and the interop server. */
export interface ManualClock {
  readonly now: Clock
  /** Moves the clock forward by `seconds` (must be ≥ 0). */
  advance(seconds: number): void
}

/** Creates a frozen clock starting at `startSeconds` (default 0). */
export function manualClock(startSeconds = 0): ManualClock {
  let t = startSeconds
  return {
    now: () => t,
    advance(seconds) {
      if (!(seconds >= 0)) throw new RangeError('a clock only moves forward')
      t += seconds
    },
  }
}

/** Monotonic seconds since process start: the default for a single replica. */
export const monotonicClock: Clock = () => performance.now() / 1000

/** Wall-clock epoch seconds: the clock several replicas sharing one Redis store must agree on. */
export const wallClock: Clock = () => Date.now() / 1000
