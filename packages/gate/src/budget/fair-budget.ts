import { BudgetConfigError } from '../errors.js'
import { type Clock, monotonicClock, wallClock } from './clock.js'
import {
  type BudgetStore,
  type FairPlan,
  type FairTaken,
  MemoryBudgetStore,
  type OpenFairPlan,
  type ReserveShare,
} from './store.js'

/**
 * Whole units left right after a decision, as the store's own atomic step reported them: for the fair budget the
 * caller's own reserve and the shared spare (which the other callers spend too), for the naive bucket its level.
 */
export type BudgetLeft = { reserve: number; spare: number } | { bucket: number }

/** Where an admitted call's unit came from: the store's own `from` (`bucket` for the naive bucket). */
export type ChargedFrom = 'reserve' | 'spare' | 'bucket'

/** Why a call was refused: no reserve is held for the caller, or what it may spend is spent (reserve and spare, or the bucket). */
export type BudgetRefusal = 'no-reserve' | 'spent' | 'bucket-empty'

/** The text of each code, for logs and tests (decisions are made on the codes). */
const ADMITTED_REASONS = {
  reserve: "admitted from this caller's own reserve",
  spare: 'admitted from the shared spare',
  bucket: 'admitted from the shared bucket',
} as const satisfies Record<ChargedFrom, string>
const REFUSED_REASONS = {
  'no-reserve': 'no reserve is held for this caller',
  spent: "this caller's reserve is spent and the spare is empty",
  'bucket-empty': 'the shared bucket is empty',
} as const satisfies Record<BudgetRefusal, string>

/**
 * One budget decision: admitted `from` somewhere, or refused with a `refusal` code; `reason` is the code's text for
 * logs and tests, and callers over budget see only the over-budget text. `left` is absent only when nothing was
 * charged or read (a caller holding no reserve).
 */
export type BudgetDecision = (
  | { [F in ChargedFrom]: { admitted: true; from: F; reason: (typeof ADMITTED_REASONS)[F] } }[ChargedFrom]
  | { [R in BudgetRefusal]: { admitted: false; refusal: R; reason: (typeof REFUSED_REASONS)[R] } }[BudgetRefusal]
) & { left?: BudgetLeft }

function admitted(from: ChargedFrom, left: BudgetLeft): BudgetDecision {
  return { admitted: true, from, reason: ADMITTED_REASONS[from], left } as BudgetDecision
}

function refused(refusal: BudgetRefusal, left?: BudgetLeft): BudgetDecision {
  const reason = REFUSED_REASONS[refusal]
  return (
    left === undefined ? { admitted: false, refusal, reason } : { admitted: false, refusal, reason, left }
  ) as BudgetDecision
}

/** A fair take as a decision: the store's `from` decides, and what it left is reported in whole units. */
function fairDecision(taken: FairTaken): BudgetDecision {
  const left = { reserve: Math.floor(taken.reserve), spare: Math.floor(taken.spare) }
  return taken.from === 'spent' ? refused('spent', left) : admitted(taken.from, left)
}

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
    if (!this.#callers.has(caller)) return refused('no-reserve')
    return fairDecision(await this.#store.takeFair(this.plan, caller, this.#clock()))
  }
}

/**
 * A fair budget for an open, changing set of callers (any verified `sub`): every caller holds a reserve of its own
 * and all share a pool, each refilling completely in `windowSeconds`. Units are whole calls.
 */
export interface BudgetPolicy {
  /** Units each caller holds for itself (0 or more): no other caller can spend them. */
  reserve: number
  /** Units every caller may spend once its own reserve is empty (0 or more). */
  pool: number
  /** Seconds in which an empty reserve, and an empty pool, refill completely (1 to 86 400). */
  windowSeconds: number
  /** `admit` (the default): any caller gets `reserve`; `refuse`: only the callers named in `callers` are served. */
  unlistedCallers?: 'admit' | 'refuse'
  /** Per-caller reserves by token `sub`, replacing `reserve` for that caller. */
  callers?: Readonly<Record<string, { reserve: number }>>
}

const POLICY_FIELDS = ['reserve', 'pool', 'windowSeconds', 'unlistedCallers', 'callers']
const MAX_UNITS = 1_000_000_000
const MAX_WINDOW_SECONDS = 86_400
const MAX_LISTED_CALLERS = 100_000

/**
 * Checks a budget policy (e.g. parsed from a JSON file). Throws BudgetConfigError naming the field at fault; a
 * caller's `sub` is named only by its place in `callers`, never echoed.
 */
export function budgetPolicy(value: unknown): BudgetPolicy {
  if (!isRecord(value)) throw new BudgetConfigError('a budget policy must be a JSON object')
  for (const field of Object.keys(value)) {
    if (!POLICY_FIELDS.includes(field))
      throw new BudgetConfigError(`unknown field in the budget policy; the fields are ${POLICY_FIELDS.join(', ')}`)
  }
  const units = (name: string, v: unknown) => {
    if (!Number.isSafeInteger(v) || (v as number) < 0 || (v as number) > MAX_UNITS)
      throw new BudgetConfigError(`${name} must be an integer from 0 to ${MAX_UNITS}`)
    return v as number
  }
  const reserve = units('reserve', value.reserve)
  const pool = units('pool', value.pool)
  const window = value.windowSeconds
  if (!Number.isSafeInteger(window) || (window as number) < 1 || (window as number) > MAX_WINDOW_SECONDS)
    throw new BudgetConfigError(`windowSeconds must be an integer from 1 to ${MAX_WINDOW_SECONDS}`)
  const unlisted = value.unlistedCallers ?? 'admit'
  if (unlisted !== 'admit' && unlisted !== 'refuse')
    throw new BudgetConfigError('unlistedCallers must be "admit" or "refuse"')
  const callers: Record<string, { reserve: number }> = Object.create(null)
  if (value.callers !== undefined) {
    if (!isRecord(value.callers)) throw new BudgetConfigError('callers must be an object of sub → {"reserve": N}')
    const entries = Object.entries(value.callers)
    if (entries.length > MAX_LISTED_CALLERS)
      throw new BudgetConfigError(`callers may list at most ${MAX_LISTED_CALLERS} callers`)
    entries.forEach(([sub, entry], i) => {
      const at = `callers (entry ${i + 1})`
      if (sub === '') throw new BudgetConfigError(`${at}: a caller's sub must not be empty`)
      if (!isRecord(entry) || Object.keys(entry).some((k) => k !== 'reserve'))
        throw new BudgetConfigError(`${at} must be {"reserve": N}`)
      callers[sub] = { reserve: units(`${at}.reserve`, entry.reserve) }
    })
  }
  if (unlisted === 'refuse' && Object.keys(callers).length === 0)
    throw new BudgetConfigError('unlistedCallers "refuse" needs at least one caller in callers')
  if (reserve + pool < 1 && Object.values(callers).every((c) => c.reserve < 1))
    throw new BudgetConfigError('reserve and pool are both 0: the policy would admit nothing')
  return { reserve, pool, windowSeconds: window as number, unlistedCallers: unlisted, callers }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Options of OpenFairBudget. */
export interface OpenFairBudgetOptions {
  policy: BudgetPolicy
  /** Seconds clock, read once per request; default monotonic. Replicas sharing Redis use `wallClock`. */
  clock?: Clock
  /**
   * Whether the clock advances one second per real second; default true for `wallClock` and `monotonicClock`
   * (and no clock), false for any other (a frozen or manual clock). Only then may Redis drop a caller's state on its
   * own timer the moment it has refilled; otherwise state is kept for the store's fixed idle time.
   */
  realTimeClock?: boolean
  /** State holder; default in memory. */
  store?: BudgetStore
  /** Key of this budget inside a shared store; default `open`. */
  key?: string
}

/**
 * The fair budget for an open set of callers: each caller's own reserve first (`policy.reserve`, or its override),
 * then the shared pool; both refill continuously, completely in `policy.windowSeconds`. A caller never spends
 * another's reserve, so a greedy caller can empty only the pool and every other caller keeps its reserve. State is
 * held only for callers whose reserve is not full (see the stores), so memory and Redis keys stay bounded by the
 * callers active within one window. Callers not listed are refused without charge when `unlistedCallers` is
 * `refuse`. Decisions and `left` are the same shape as FairBudget's (`spare` is the pool).
 */
export class OpenFairBudget implements Budget {
  readonly policy: BudgetPolicy
  readonly plan: OpenFairPlan
  readonly #clock: Clock
  readonly #store: BudgetStore
  readonly #share: ReserveShare
  readonly #overrides: ReadonlyMap<string, ReserveShare>
  readonly #refuseUnlisted: boolean

  constructor(options: OpenFairBudgetOptions) {
    const policy = budgetPolicy(options.policy)
    const w = policy.windowSeconds
    this.policy = policy
    this.#clock = options.clock ?? monotonicClock
    const realTime =
      options.realTimeClock ??
      (options.clock === undefined || options.clock === wallClock || options.clock === monotonicClock)
    this.plan = { key: options.key ?? 'open', poolSize: policy.pool, poolRate: policy.pool / w, realTime }
    this.#share = { size: policy.reserve, rate: policy.reserve / w }
    this.#overrides = new Map(
      Object.entries(policy.callers ?? {}).map(([sub, c]) => [sub, { size: c.reserve, rate: c.reserve / w }]),
    )
    this.#refuseUnlisted = policy.unlistedCallers === 'refuse'
    this.#store = options.store ?? new MemoryBudgetStore()
  }

  /** The reserve this caller holds under the policy, or undefined when it holds none (refused without charge). */
  reserveOf(caller: string): ReserveShare | undefined {
    if (caller === '') return undefined
    return this.#overrides.get(caller) ?? (this.#refuseUnlisted ? undefined : this.#share)
  }

  async request(caller: string): Promise<BudgetDecision> {
    const share = this.reserveOf(caller)
    // No state is created and nothing is charged for a caller the policy gives no reserve.
    if (share === undefined) return refused('no-reserve')
    return fairDecision(await this.#store.takeOpen(this.plan, caller, share, this.#clock()))
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
    return taken.admitted ? admitted('bucket', left) : refused('bucket-empty', left)
  }
}
