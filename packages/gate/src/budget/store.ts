/** A fair budget's pool sizes and refill rates, all per second, all real numbers. */
export interface FairPlan {
  /** Identifies this budget's state inside a shared store. */
  key: string
  callers: readonly string[]
  reserveSize: number
  reserveRate: number
  spareSize: number
  spareRate: number
}

/** A naive bucket's size and refill rate. */
export interface NaivePlan {
  key: string
  capacity: number
  rate: number
}

/** Where a unit came from, or that none was available. */
export type FairTake = 'reserve' | 'spare' | 'spent'

/** One fair take: where the unit came from, and the caller's reserve and the shared spare right after it. */
export interface FairTaken {
  from: FairTake
  /** The caller's own reserve after this take (real units). */
  reserve: number
  /** The shared spare after this take (real units); other callers spend it too. */
  spare: number
}

/** One naive take: admitted or not, and the bucket's level right after it. */
export interface NaiveTaken {
  admitted: boolean
  level: number
}

/**
 * Holds budget state. Each method must be atomic: read the pools, refill them to `nowSeconds` (never backwards),
 * take one unit, write back — as one step, so several replicas sharing a store never over-admit. What is left is
 * reported by that same step, never read again afterwards (another replica may have spent it meanwhile).
 * Pools start full on first use. The caller is already known to be one of `plan.callers`.
 */
export interface BudgetStore {
  takeFair(plan: FairPlan, caller: string, nowSeconds: number): Promise<FairTaken>
  takeNaive(plan: NaivePlan, nowSeconds: number): Promise<NaiveTaken>
}

interface FairState {
  t: number
  spare: number
  reserves: Map<string, number>
}

/** The in-memory store: one process, one replica. The default. */
export class MemoryBudgetStore implements BudgetStore {
  readonly #fair = new Map<string, FairState>()
  readonly #naive = new Map<string, { t: number; level: number }>()

  async takeFair(plan: FairPlan, caller: string, now: number): Promise<FairTaken> {
    let state = this.#fair.get(plan.key)
    if (state === undefined) {
      state = { t: now, spare: plan.spareSize, reserves: new Map(plan.callers.map((c) => [c, plan.reserveSize])) }
      this.#fair.set(plan.key, state)
    }
    const elapsed = now - state.t
    if (elapsed > 0) {
      for (const [c, v] of state.reserves)
        state.reserves.set(c, Math.min(plan.reserveSize, v + elapsed * plan.reserveRate))
      state.spare = Math.min(plan.spareSize, state.spare + elapsed * plan.spareRate)
      state.t = now
    }
    const mine = state.reserves.get(caller) ?? 0
    if (mine >= 1) {
      state.reserves.set(caller, mine - 1)
      return { from: 'reserve', reserve: mine - 1, spare: state.spare }
    }
    if (state.spare >= 1) {
      state.spare -= 1
      return { from: 'spare', reserve: mine, spare: state.spare }
    }
    return { from: 'spent', reserve: mine, spare: state.spare }
  }

  async takeNaive(plan: NaivePlan, now: number): Promise<NaiveTaken> {
    let state = this.#naive.get(plan.key)
    if (state === undefined) {
      state = { t: now, level: plan.capacity }
      this.#naive.set(plan.key, state)
    }
    const elapsed = now - state.t
    if (elapsed > 0) {
      state.level = Math.min(plan.capacity, state.level + elapsed * plan.rate)
      state.t = now
    }
    if (state.level >= 1) {
      state.level -= 1
      return { admitted: true, level: state.level }
    }
    return { admitted: false, level: state.level }
  }
}
