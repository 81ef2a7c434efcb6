import { BudgetConfigError } from '../errors.js'
import { type Clock, monotonicClock } from './clock.js'
import { type BudgetStore, type FairPlan, MemoryBudgetStore } from './store.js'

/**
 * Whole units left right after a decision, as the store's own atomic step reported them: for the fair budget the
 * caller's own reserve and the shared spare (which the other callers spend too), for the naive bucket its level.
 */
export type BudgetLeft = { reserve: number; spare: number } | { bucket: number }

/**
 * One budget decision. `reason` is for logs and tests; callers over budget see only the over-budget text.
 * `left` is absent only when nothing was charged or read (a caller holding no reserve).
 */
export type BudgetDecision = (
  | {
      admitted: true
      reason:
        | "admitted from this caller's own reserve"
        | 'admitted from the shared spare'
        | 'admitted from the shared bucket'
    }
  | {
      admitted: false
      reason:
        | 'no reserve is held for this caller'
        | "this caller's reserve is spent and the spare is empty"
        | 'the shared bucket is empty'
    }
) & { left?: BudgetLeft }

/** Anything that can be charged one unit per call: the fair budget, or the naive bucket kept for measurement. */
export interface Budget {
  request(caller: string): Promise<BudgetDecision>
}

/** Options of FairBudget. */
export interface FairBudgetOptions {
  /** Total capacity C (units). */
  capacity: number
  /** Total refill R (units per second). */
  refillPerSecond: number
  /** Callers holding a reserve; any other caller is refused without charge. */
  callers: readonly string[]
  /** Fraction f of C and R split into equal reserves, in (0, 1]; default 0.5. The rest is the shared spare. */
  reserveFraction?: number
  /** Seconds clock, read once per request; default monotonic. */
  clock?: Clock
  /** State holder; default in memory. */
  store?: BudgetStore
  /** Key of this budget inside a shared store; default `fair`. */
  key?: string
}

/**
 * The fair budget: each of n callers owns a reserve of C·f/n refilling at R·f/n per second, and all share a spare
 * of C·(1−f) refilling at R·(1−f). A request takes from the caller's own reserve first, then the spare. Amounts are
 * real numbers, so refill is fractional. Throws BudgetConfigError on impossible parameters.
 */
export class FairBudget implements Budget {
  readonly plan: FairPlan
  readonly reserveFraction: number
  readonly capacity: number
  readonly #clock: Clock
  readonly #store: BudgetStore
  readonly #callers: ReadonlySet<string>

  constructor(options: FairBudgetOptions) {
    const f = options.reserveFraction ?? 0.5
    if (options.callers.length === 0)
      throw new BudgetConfigError('a fair budget needs at least one caller to be fair between')
    if (!(f > 0 && f <= 1)) throw new BudgetConfigError(`reserve_fraction must be in (0, 1]: ${f}`)
    if (!(options.capacity > 0) || !(options.refillPerSecond >= 0)) {
      throw new BudgetConfigError('capacity must be positive and the refill rate not negative')
    }
    const n = new Set(options.callers).size
    if (n !== options.callers.length) throw new BudgetConfigError('each caller may be named once')
    const { capacity: c, refillPerSecond: r } = options
    this.reserveFraction = f
    this.capacity = c
    this.plan = {
      key: options.key ?? 'fair',
      callers: [...options.callers],
      reserveSize: (c * f) / n,
      reserveRate: (r * f) / n,
      spareSize: c * (1 - f),
      spareRate: r * (1 - f),
    }
    this.#callers = new Set(options.callers)
    this.#clock = options.clock ?? monotonicClock
    this.#store = options.store ?? new MemoryBudgetStore()
  }

  async request(caller: string): Promise<BudgetDecision> {
    // Never create capacity for an invented name: unknown callers are refused before the clock or store is touched.
    if (!this.#callers.has(caller)) return { admitted: false, reason: 'no reserve is held for this caller' }
    const taken = await this.#store.takeFair(this.plan, caller, this.#clock())
    const left = { reserve: Math.floor(taken.reserve), spare: Math.floor(taken.spare) }
    if (taken.from === 'reserve') return { admitted: true, reason: "admitted from this caller's own reserve", left }
    if (taken.from === 'spare') return { admitted: true, reason: 'admitted from the shared spare', left }
    return { admitted: false, reason: "this caller's reserve is spent and the spare is empty", left }
  }
}

/** The naive shared bucket of capacity C refilling at R per second, ignoring who asks. Kept to measure against. */
export class NaiveBucket implements Budget {
  readonly #plan: { key: string; capacity: number; rate: number }
  readonly #clock: Clock
  readonly #store: BudgetStore

  constructor(options: {
    capacity: number
    refillPerSecond: number
    clock?: Clock
    store?: BudgetStore
    key?: string
  }) {
    if (!(options.capacity > 0) || !(options.refillPerSecond >= 0)) {
      throw new BudgetConfigError('capacity must be positive and the refill rate not negative')
    }
    this.#plan = { key: options.key ?? 'naive', capacity: options.capacity, rate: options.refillPerSecond }
    this.#clock = options.clock ?? monotonicClock
    this.#store = options.store ?? new MemoryBudgetStore()
  }

  async request(_caller: string): Promise<BudgetDecision> {
    const taken = await this.#store.takeNaive(this.#plan, this.#clock())
    const left = { bucket: Math.floor(taken.level) }
    return taken.admitted
      ? { admitted: true, reason: 'admitted from the shared bucket', left }
      : { admitted: false, reason: 'the shared bucket is empty', left }
  }
}
