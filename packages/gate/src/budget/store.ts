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

/**
 * Holds budget state. Each method must be atomic: read the pools, refill them to `nowSeconds` (never backwards),
 * take one unit, write back — as one step, so several replicas sharing a store never over-admit.
 * Pools start full on first use. The caller is already known to be one of `plan.callers`.
 */
export interface BudgetStore {
  takeFair(plan: FairPlan, caller: string, nowSeconds: number): Promise<FairTake>
  takeNaive(plan: NaivePlan, nowSeconds: number): Promise<boolean>
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

  async takeFair(plan: FairPlan, caller: string, now: number): Promise<FairTake> {
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
      return 'reserve'
    }
    if (state.spare >= 1) {
      state.spare -= 1
      return 'spare'
    }
    return 'spent'
  }

  async takeNaive(plan: NaivePlan, now: number): Promise<boolean> {
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
      return true
    }
    return false
  }
}
