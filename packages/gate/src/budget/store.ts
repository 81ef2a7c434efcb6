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

/**
 * An open fair budget's shared pool. Each caller's own reserve comes with each take (from the policy: overrides
 * differ per caller), so nothing here lists the callers.
 */
export interface OpenFairPlan {
  /** Identifies this budget's state inside a shared store. */
  key: string
  poolSize: number
  poolRate: number
  /**
   * true when the budget clock advances one second per real second (the wall clock): a store that expires state on
   * its own real-time timer (Redis) may then drop a caller's state exactly when it has refilled. Otherwise (a frozen
   * or manual clock) the store keeps state for its fixed idle time.
   */
  realTime: boolean
}

/** One caller's reserve: its size and refill rate (units, units per second). */
export interface ReserveShare {
  size: number
  rate: number
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
  /**
   * One take of an open fair budget: the caller's own reserve first, then the shared pool. A caller with no state
   * starts with a full reserve, so state may be dropped once it has refilled (the store's bound on what it holds).
   */
  takeOpen(plan: OpenFairPlan, caller: string, reserve: ReserveShare, nowSeconds: number): Promise<FairTaken>
}

/** A level that refills over time: its amount and the clock time it was last brought up to date. */
interface Level {
  level: number
  t: number
}

/** Brings a level up to `now` (never backwards), capped at `size` (also when the size was lowered since). */
function refilled(state: Level, size: number, rate: number, now: number): Level {
  const elapsed = now - state.t
  if (elapsed > 0) return { level: Math.min(size, state.level + elapsed * rate), t: now }
  return { level: Math.min(size, state.level), t: state.t }
}

/** Default bound on callers an in-memory open budget holds state for (see MemoryBudgetStore). */
export const MEMORY_MAX_CALLERS = 10_000

interface OpenState {
  pool: Level
  /** Callers whose reserve is not full, least recently charged first; `fullAt` is when it will be full again. */
  callers: Map<string, Level & { fullAt: number }>
}

interface FairState {
  t: number
  spare: number
  reserves: Map<string, number>
}

/**
 * The in-memory store: one process, one replica. The default. An open budget holds state only for callers whose
 * reserve is not full: a caller is released the moment its reserve would be full again on the budget clock (exact:
 * a full reserve is what a caller with no state gets), and at most `maxCallers` (default 10 000) are held — past that
 * the least recently charged caller is released early, which can only give that caller back a full reserve.
 */
export class MemoryBudgetStore implements BudgetStore {
  readonly #fair = new Map<string, FairState>()
  readonly #naive = new Map<string, { t: number; level: number }>()
  readonly #open = new Map<string, OpenState>()
  readonly #maxCallers: number
  #releasedEarly = 0

  constructor(options: { maxCallers?: number } = {}) {
    this.#maxCallers = options.maxCallers ?? MEMORY_MAX_CALLERS
  }

  /** Callers of an open budget whose state is held (a diagnostic: the memory bound in tests). */
  heldCallers(planKey: string): number {
    return this.#open.get(planKey)?.callers.size ?? 0
  }

  /** Callers released before their reserve had refilled, because more than `maxCallers` were held. */
  get releasedEarly(): number {
    return this.#releasedEarly
  }

  async takeOpen(plan: OpenFairPlan, caller: string, reserve: ReserveShare, now: number): Promise<FairTaken> {
    let state = this.#open.get(plan.key)
    if (state === undefined) {
      state = { pool: { level: plan.poolSize, t: now }, callers: new Map() }
      this.#open.set(plan.key, state)
    }
    // Release callers that are full again, oldest first (map order is least recently charged first).
    for (const [name, held] of state.callers) {
      if (held.fullAt > now) break
      state.callers.delete(name)
    }
    const held = state.callers.get(caller)
    state.callers.delete(caller)
    let mine = held === undefined ? { level: reserve.size, t: now } : refilled(held, reserve.size, reserve.rate, now)
    state.pool = refilled(state.pool, plan.poolSize, plan.poolRate, now)
    let from: FairTaken['from'] = 'spent'
    if (mine.level >= 1) {
      mine = { level: mine.level - 1, t: mine.t }
      from = 'reserve'
    } else if (state.pool.level >= 1) {
      state.pool = { level: state.pool.level - 1, t: state.pool.t }
      from = 'spare'
    }
    if (mine.level < reserve.size) {
      const fullAt = reserve.rate > 0 ? mine.t + (reserve.size - mine.level) / reserve.rate : Number.POSITIVE_INFINITY
      state.callers.set(caller, { ...mine, fullAt })
      for (const [name] of state.callers) {
        if (state.callers.size <= this.#maxCallers) break
        state.callers.delete(name)
        this.#releasedEarly++
      }
    }
    return { from, reserve: mine.level, spare: state.pool.level }
  }

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
