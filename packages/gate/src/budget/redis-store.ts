import { randomUUID } from 'node:crypto'
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis'
import { BudgetStoreError, GateConfigError } from '../errors.js'
import { isNoScript, type RedisScript, redisScript } from '../internal/redis-script.js'
import type { BudgetStore, FairPlan, FairTaken, NaivePlan, NaiveTaken, OpenFairPlan, ReserveShare } from './store.js'

// Same arithmetic as MemoryBudgetStore, in one Lua script so the read-refill-take-write is atomic across replicas.
// Numbers are stored with %.17g so every double round-trips exactly (Lua's tostring keeps only 14 digits).
// Each script answers what it did and what is left after it, as strings: a Lua number in a reply would be
// truncated to an integer, and asking again afterwards would race other replicas.
//
// Every script starts with the same prelude (KEYS[1] the epoch key; ARGV[1..4] deadline, expected epoch, a fresh
// epoch, what to do when the epoch is gone):
// - the deadline, in Redis's own milliseconds (0: none): a script that runs after it changes nothing and answers
//   'late'. A command sent to a frozen Redis is executed when it resumes, long after its caller was answered 503;
//   without this it would charge that caller for a call it never got.
// - the epoch: written when the store opens, never expiring. If it is gone, Redis lost its data (restarted empty,
//   flushed): 'reseed' writes a fresh one and goes on (the answer says 'reseeded', once, to the replica that did),
//   'refuse' answers 'lost' and changes nothing until an operator writes the key again (or a replica restarts).
const PRELUDE = `
local function fmt(x) return string.format('%.17g', x) end
local deadline = tonumber(ARGV[1])
if deadline > 0 then
  local tm = redis.call('TIME')
  if tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000) > deadline then return {'late'} end
end
local expected, fresh = ARGV[2], ARGV[3]
local epoch = redis.call('GET', KEYS[1])
local note = 'same'
if not epoch then
  if expected ~= '' and ARGV[4] == 'refuse' then return {'lost'} end
  redis.call('SET', KEYS[1], fresh)
  epoch = fresh
  if expected ~= '' then note = 'reseeded' end
elseif epoch ~= expected and expected ~= '' then
  note = 'changed'
end
local function answer(t)
  t[#t + 1] = epoch
  t[#t + 1] = note
  return t
end
`

const FAIR_SCRIPT = `${PRELUDE}
local key = KEYS[2]
local now = tonumber(ARGV[5])
local caller = ARGV[6]
local rsize, rrate = tonumber(ARGV[7]), tonumber(ARGV[8])
local ssize, srate = tonumber(ARGV[9]), tonumber(ARGV[10])
local ttl = tonumber(ARGV[11])
local first = 12
local t = redis.call('HGET', key, 't')
if not t then
  redis.call('HSET', key, 't', fmt(now), 'spare', fmt(ssize))
  for i = first, #ARGV do redis.call('HSET', key, 'r:' .. ARGV[i], fmt(rsize)) end
  t = now
else
  t = tonumber(t)
end
local spare = tonumber(redis.call('HGET', key, 'spare'))
local mine = tonumber(redis.call('HGET', key, 'r:' .. caller) or '0')
local elapsed = now - t
if elapsed > 0 then
  for i = first, #ARGV do
    local field = 'r:' .. ARGV[i]
    local v = math.min(rsize, tonumber(redis.call('HGET', key, field) or fmt(rsize)) + elapsed * rrate)
    redis.call('HSET', key, field, fmt(v))
    if ARGV[i] == caller then mine = v end
  end
  spare = math.min(ssize, spare + elapsed * srate)
  redis.call('HSET', key, 't', fmt(now), 'spare', fmt(spare))
end
if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
if mine >= 1 then
  redis.call('HSET', key, 'r:' .. caller, fmt(mine - 1))
  return answer({'1', fmt(mine - 1), fmt(spare)})
end
if spare >= 1 then
  redis.call('HSET', key, 'spare', fmt(spare - 1))
  return answer({'2', fmt(mine), fmt(spare - 1)})
end
return answer({'0', fmt(mine), fmt(spare)})
`

// The open budget: one hash per caller (KEYS[2]: level and time) and one for the pool (KEYS[3]). A caller with no
// key has a full reserve, so a key is deleted once full and, on a real-time clock, expires exactly when it would
// have refilled (plus a second for clocks of replicas that disagree slightly); otherwise after the fixed idle time.
const OPEN_SCRIPT = `${PRELUDE}
local now = tonumber(ARGV[5])
local rsize, rrate = tonumber(ARGV[6]), tonumber(ARGV[7])
local psize, prate = tonumber(ARGV[8]), tonumber(ARGV[9])
local realtime, idle = ARGV[10] == '1', tonumber(ARGV[11])
local function level(key, size, rate)
  local v = redis.call('HMGET', key, 'v', 't')
  if not v[1] then return size, now end
  local x, t = tonumber(v[1]), tonumber(v[2])
  if now > t then return math.min(size, x + (now - t) * rate), now end
  return math.min(size, x), t
end
local function keep(key, size, rate, x, t)
  if x >= size then redis.call('DEL', key) return end
  redis.call('HSET', key, 'v', fmt(x), 't', fmt(t))
  if realtime and rate > 0 then
    redis.call('PEXPIRE', key, math.ceil((size - x) / rate * 1000) + 1000)
  elseif idle > 0 then
    redis.call('PEXPIRE', key, idle)
  end
end
local mine, mt = level(KEYS[2], rsize, rrate)
local pool, pt = level(KEYS[3], psize, prate)
local code = '0'
if mine >= 1 then
  mine = mine - 1
  code = '1'
elseif pool >= 1 then
  pool = pool - 1
  code = '2'
end
keep(KEYS[2], rsize, rrate, mine, mt)
keep(KEYS[3], psize, prate, pool, pt)
return answer({code, fmt(mine), fmt(pool)})
`

const NAIVE_SCRIPT = `${PRELUDE}
local key = KEYS[2]
local now, cap, rate, ttl = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local t = redis.call('HGET', key, 't')
local level
if not t then
  level = cap
  redis.call('HSET', key, 't', fmt(now))
else
  level = tonumber(redis.call('HGET', key, 'level'))
  local elapsed = now - tonumber(t)
  if elapsed > 0 then
    level = math.min(cap, level + elapsed * rate)
    redis.call('HSET', key, 't', fmt(now))
  end
end
if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
if level >= 1 then
  redis.call('HSET', key, 'level', fmt(level - 1))
  return answer({'1', fmt(level - 1)})
end
redis.call('HSET', key, 'level', fmt(level))
return answer({'0', fmt(level)})
`

// Sent by SHA1 (EVALSHA), the text only on a connection's first call or after Redis answers NOSCRIPT (see
// internal/redis-script.ts): about 1.8 KB less into Redis per charge.
const FAIR = redisScript('tollgateBudgetFair', FAIR_SCRIPT)
const OPEN = redisScript('tollgateBudgetOpen', OPEN_SCRIPT)
const NAIVE = redisScript('tollgateBudgetNaive', NAIVE_SCRIPT)

/** What a Redis budget store reports once per change (for one log line each, never one per call). */
export type BudgetStoreEvent =
  /** The first failure after the store last answered (or at start): the cause, one line, no credentials. */
  | { kind: 'unavailable'; cause: string }
  /** The first answer after `unavailable`. */
  | { kind: 'available' }
  /** The epoch key was gone: Redis lost the budget's state. `reseeded`: every caller starts full again. */
  | { kind: 'state-lost'; action: 'reseeded' | 'refusing' }
  /** Another replica re-seeded, or an operator acknowledged a loss: this replica follows the new epoch. */
  | { kind: 'epoch-changed' }

/** Options of RedisBudgetStore. */
export interface RedisBudgetStoreOptions {
  /**
   * Key prefix; default `tollgate:budget:`. The epoch key is `<prefix>epoch`. On a Redis Cluster the prefix may not
   * hold `{` or `}` (the store adds the hash tags itself), and each budget has an epoch key of its own.
   */
  prefix?: string
  /**
   * How long state of a budget on a clock that is not real time stays after its last use, ms; default one day. An
   * open budget on the wall clock instead drops a caller's key when its reserve has refilled.
   */
  ttlMs?: number
  /**
   * When Redis has lost the budget's state (no epoch key): `reseed` (default) writes a new epoch and goes on, every
   * caller starting with a full reserve; `refuse` refuses every call (BudgetStoreError) until an operator writes
   * the epoch key again (`SET <prefix>epoch acknowledged`) or a replica restarts.
   */
  onLostState?: 'reseed' | 'refuse'
  onEvent?: (event: BudgetStoreEvent) => void
  /**
   * Replicas that must hold a charge before its call is admitted (Redis `WAIT`, sent with the script on the same
   * connection, to the same node); default 0: none, replication stays asynchronous and a failover can lose the
   * charges the promoted replica had not received. A charge not acknowledged by this many replicas within half the
   * command timeout refuses its call (BudgetStoreError; the charge stays, so the error is one unit too many, never
   * one too few). While fewer replicas are up, every call is refused.
   */
  replicas?: number
}

/**
 * ioredis options for a budget's connection, chosen so an outage costs a caller at most `commandTimeoutMs` and
 * is then refused fast: no offline queue (a command while disconnected fails at once, it does not wait for a
 * reconnect), no retry of a command whose connection dropped (it may have run; the script's deadline covers the
 * rest), a socket that has not answered within the command timeout is dropped and reconnected (so one frozen call
 * makes the next ones fail at once instead of each waiting), and reconnection every 100 ms rising to 1 s.
 */
export function budgetRedisOptions(
  options: { connectTimeoutMs?: number; commandTimeoutMs?: number } = {},
): RedisOptions {
  const commandTimeout = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS
  return {
    connectTimeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    commandTimeout,
    socketTimeout: commandTimeout,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (times: number) => Math.min(times * 100, 1000),
  }
}

/**
 * ioredis Cluster options for a budget's connection, the Cluster's counterpart of {@link budgetRedisOptions}: each
 * node's connection gets those options, nothing waits in an offline queue, and a command whose node went away or
 * whose cluster is down fails at once instead of being retried after a delay (a call it was charging is refused
 * with 503; a retry could outlive its caller). Redirections (MOVED, ASK), which mean the command did not run, are
 * still followed.
 */
export function budgetClusterOptions(
  options: { connectTimeoutMs?: number; commandTimeoutMs?: number } = {},
): ClusterOptions {
  return {
    redisOptions: budgetRedisOptions(options),
    enableOfflineQueue: false,
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    clusterRetryStrategy: (times: number) => Math.min(times * 100, 1000),
  }
}

/** Default Redis connect timeout of a budget's connection, ms. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 1000
/** Default Redis command timeout of a budget's connection, ms: the most a frozen Redis costs a caller. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 500

/**
 * A budget store in Redis, for several replicas sharing one budget: one Redis (a URL, or a Sentinel-watched master)
 * or a Redis Cluster. Keys are `<prefix><kind>:<plan.key>…` beside one epoch key `<prefix>epoch`; on a Cluster they
 * are `<prefix>{<kind>:<plan.key>}…` with an epoch key per budget (`<prefix>{<kind>:<plan.key>}:epoch`), so that
 * every key a charge's script touches hashes to one slot and the charge stays one atomic step (each budget lives on
 * one shard; several budgets spread over the shards). Every replica must use the same clock (epoch seconds:
 * `wallClock`). A Redis failure rejects with BudgetStoreError and admits nothing. Give the client
 * {@link budgetRedisOptions} (a Cluster {@link budgetClusterOptions}) so an outage is refused fast.
 */
export class RedisBudgetStore implements BudgetStore {
  readonly #redis: Redis | Cluster
  readonly #cluster: boolean
  readonly #prefix: string
  readonly #ttlMs: number
  readonly #onLost: 'reseed' | 'refuse'
  readonly #emit: (event: BudgetStoreEvent) => void
  readonly #replicas: number
  /** The epoch this replica last saw, by epoch key (one key on one Redis; one per budget on a Cluster). */
  readonly #epochs = new Map<string, string>()
  #down = false
  /** Epoch keys whose loss was reported ('refusing'), so it is said once per loss. */
  readonly #lostReported = new Set<string>()
  /** Redis's clock minus performance.now(), ms, measured with TIME; undefined until measured. */
  #offsetMs: number | undefined
  #measuredAt = Number.NEGATIVE_INFINITY

  constructor(redis: Redis | Cluster, options: RedisBudgetStoreOptions = {}) {
    this.#redis = redis
    this.#cluster = redis.isCluster
    this.#prefix = options.prefix ?? 'tollgate:budget:'
    if (this.#cluster && /[{}]/.test(this.#prefix))
      throw new GateConfigError('on a Redis Cluster the budget key prefix may not hold { or }')
    this.#ttlMs = options.ttlMs ?? 86_400_000
    this.#onLost = options.onLostState ?? 'reseed'
    this.#emit = options.onEvent ?? (() => {})
    this.#replicas = options.replicas ?? 0
    if (!Number.isSafeInteger(this.#replicas) || this.#replicas < 0)
      throw new GateConfigError('replicas must be a whole number from 0')
  }

  /**
   * Writes the epoch key unless it exists, and remembers it: from now on, its absence means Redis lost the state.
   * Call it at start (quenchz does); without it the first charge does it.
   */
  async open(): Promise<void> {
    // On a Cluster each budget's epoch key is written by its first charge (the budgets are not known here).
    if (!this.#cluster) {
      const key = `${this.#prefix}epoch`
      try {
        await this.#redis.set(key, randomUUID(), 'NX')
        this.#epochs.set(key, (await this.#redis.get(key)) ?? '')
      } catch (error) {
        throw new BudgetStoreError({ cause: error })
      }
    }
    await this.#measureClock()
  }

  /** Where a budget's keys start, and its epoch key (see the class's doc). */
  #keys(kind: 'fair' | 'naive' | 'open', key: string): { base: string; epoch: string } {
    if (!this.#cluster) return { base: `${this.#prefix}${kind}:${key}`, epoch: `${this.#prefix}epoch` }
    const base = `${this.#prefix}{${kind}:${key}}`
    return { base, epoch: `${base}:epoch` }
  }

  async takeFair(plan: FairPlan, caller: string, now: number): Promise<FairTaken> {
    const args = [
      now,
      caller,
      plan.reserveSize,
      plan.reserveRate,
      plan.spareSize,
      plan.spareRate,
      this.#ttlMs,
      ...plan.callers,
    ]
    const { base, epoch } = this.#keys('fair', plan.key)
    const [code, reserve, spare] = await this.#run(FAIR, epoch, [base], args.map(String))
    const from = code === '1' ? 'reserve' : code === '2' ? 'spare' : 'spent'
    return { from, reserve: Number(reserve), spare: Number(spare) }
  }

  async takeNaive(plan: NaivePlan, now: number): Promise<NaiveTaken> {
    const { base, epoch } = this.#keys('naive', plan.key)
    const [code, level] = await this.#run(
      NAIVE,
      epoch,
      [base],
      [now, plan.capacity, plan.rate, this.#ttlMs].map(String),
    )
    return { admitted: code === '1', level: Number(level) }
  }

  async takeOpen(plan: OpenFairPlan, caller: string, reserve: ReserveShare, now: number): Promise<FairTaken> {
    const { base, epoch } = this.#keys('open', plan.key)
    const [code, mine, pool] = await this.#run(
      OPEN,
      epoch,
      [`${base}:c:${caller}`, `${base}:pool`],
      [now, reserve.size, reserve.rate, plan.poolSize, plan.poolRate, plan.realTime ? 1 : 0, this.#ttlMs].map(String),
    )
    const from = code === '1' ? 'reserve' : code === '2' ? 'spare' : 'spent'
    return { from, reserve: Number(mine), spare: Number(pool) }
  }

  async #run(script: RedisScript, epochKey: string, keys: string[], args: string[]): Promise<string[]> {
    if (performance.now() - this.#measuredAt > CLOCK_REMEASURE_MS) void this.#measureClock()
    const fresh = randomUUID()
    const known = this.#epochs.get(epochKey) ?? ''
    const allKeys = [epochKey, ...keys]
    const allArgs = [String(this.#deadline()), known, fresh, this.#onLost, ...args]
    let answer: string[]
    try {
      answer =
        this.#replicas === 0
          ? ((await script.run(this.#redis, allKeys, allArgs)) as string[])
          : await this.#evalReplicated(script, allKeys, allArgs)
    } catch (error) {
      if (!this.#down) {
        this.#down = true
        this.#emit({ kind: 'unavailable', cause: oneLine(error) })
      }
      throw new BudgetStoreError({ cause: error })
    }
    if (this.#down) {
      this.#down = false
      this.#emit({ kind: 'available' })
      // A reconnect may be to another Redis (failover), or its clock may have been stepped: measure again.
      void this.#measureClock()
    }
    if (answer[0] === 'late') throw new BudgetStoreError({ cause: new Error('answered after its deadline') })
    if (answer[0] === 'lost') {
      if (!this.#lostReported.has(epochKey)) {
        this.#lostReported.add(epochKey)
        this.#emit({ kind: 'state-lost', action: 'refusing' })
      }
      throw new BudgetStoreError({ cause: new Error('the budget state was lost and is not yet acknowledged') })
    }
    const note = answer[answer.length - 1]
    const epoch = answer[answer.length - 2] as string
    if (note === 'reseeded') this.#emit({ kind: 'state-lost', action: 'reseeded' })
    else if (note === 'changed') this.#emit({ kind: 'epoch-changed' })
    if (epoch !== known) this.#lostReported.delete(epochKey)
    this.#epochs.set(epochKey, epoch)
    return answer
  }

  /**
   * The script, then `WAIT replicas` in one pipeline: on one connection to one node (on a Cluster, the node serving
   * the keys' slot), so the WAIT covers the script's writes. A WAIT after a script that wrote nothing answers at
   * once. Too few acknowledgements reject, charged or not. The script goes by its SHA1 (EVALSHA); when that node
   * answers NOSCRIPT (a failed-over master or a new Cluster node starts with no scripts; SCRIPT FLUSH) the EVALSHA
   * ran nothing, so the whole pipeline is sent again with the script's text (EVAL, which also loads it): the charge
   * still runs once, and its WAIT still follows it on the same connection (ioredis's own NOSCRIPT retry would send
   * the script alone, after this pipeline's WAIT).
   */
  async #evalReplicated(script: RedisScript, keys: string[], args: string[]): Promise<string[]> {
    const options = this.#redis.options as { commandTimeout?: number; redisOptions?: { commandTimeout?: number } }
    const timeout = (this.#cluster ? options.redisOptions?.commandTimeout : options.commandTimeout) ?? 1000
    const send = async (withText: boolean) => {
      const pipeline = this.#redis.pipeline()
      if (withText) script.evalIn(pipeline, keys, args)
      else script.evalshaIn(pipeline, keys, args)
      return (await pipeline.wait(this.#replicas, Math.max(1, Math.floor(timeout / 2))).exec()) ?? []
    }
    let results = await send(false)
    if (isNoScript(results[0]?.[0])) results = await send(true)
    const [ran, waited] = results
    if (ran?.[0]) throw ran[0]
    if (waited?.[0]) throw waited[0]
    if (typeof waited?.[1] !== 'number' || waited[1] < this.#replicas)
      throw new Error(`the charge reached ${String(waited?.[1])} of ${this.#replicas} replicas in time`)
    return ran?.[1] as string[]
  }

  /**
   * The moment after which the script must not charge, in Redis's milliseconds: a fifth of the command timeout
   * before the client gives up, so an answer that still charges also still arrives. 0 (none) until the offset to
   * Redis's clock is known or without a command timeout.
   */
  #deadline(): number {
    const options = this.#redis.options as { commandTimeout?: number; redisOptions?: { commandTimeout?: number } }
    const timeout = this.#cluster ? options.redisOptions?.commandTimeout : options.commandTimeout
    if (this.#offsetMs === undefined || timeout === undefined || !(timeout > 0)) return 0
    return Math.floor(performance.now() + this.#offsetMs + timeout * 0.8)
  }

  async #measureClock(): Promise<void> {
    this.#measuredAt = performance.now()
    try {
      const before = performance.now()
      const [seconds, micros] = await this.#redis.time()
      const after = performance.now()
      this.#offsetMs = Number(seconds) * 1000 + Number(micros) / 1000 - (before + after) / 2
    } catch {
      // Measured again on the next ready or after CLOCK_REMEASURE_MS; meanwhile the last offset (or none) holds.
    }
  }
}

/** How often the offset to Redis's clock is measured again, ms. */
const CLOCK_REMEASURE_MS = 60_000

// Redis error texts carry no credentials (ioredis never echoes the password), but may span lines.
function oneLine(error: unknown): string {
  return String((error as Error).message ?? error).split('\n')[0] as string
}
