import type { Redis } from 'ioredis'
import { BudgetStoreError } from '../errors.js'
import type { BudgetStore, FairPlan, FairTaken, NaivePlan, NaiveTaken } from './store.js'

// Same arithmetic as MemoryBudgetStore, in one Lua script so the read-refill-take-write is atomic across replicas.
// Numbers are stored with %.17g so every double round-trips exactly (Lua's tostring keeps only 14 digits).
// Each script answers what it did and what is left after it, as strings: a Lua number in a reply would be
// truncated to an integer, and asking again afterwards would race other replicas.
const FAIR_SCRIPT = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local caller = ARGV[2]
local rsize, rrate = tonumber(ARGV[3]), tonumber(ARGV[4])
local ssize, srate = tonumber(ARGV[5]), tonumber(ARGV[6])
local ttl = tonumber(ARGV[7])
local first = 8
local function fmt(x) return string.format('%.17g', x) end
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
  return {'1', fmt(mine - 1), fmt(spare)}
end
if spare >= 1 then
  redis.call('HSET', key, 'spare', fmt(spare - 1))
  return {'2', fmt(mine), fmt(spare - 1)}
end
return {'0', fmt(mine), fmt(spare)}
`

const NAIVE_SCRIPT = `
local key = KEYS[1]
local now, cap, rate, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local function fmt(x) return string.format('%.17g', x) end
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
  return {'1', fmt(level - 1)}
end
redis.call('HSET', key, 'level', fmt(level))
return {'0', fmt(level)}
`

/**
 * A budget store in Redis, for several replicas sharing one budget. Keys are `<prefix><plan.key>`; idle state
 * expires after `ttlMs` (default one day). Every replica must use the same clock (epoch seconds: `wallClock`).
 * A Redis failure rejects with BudgetStoreError and admits nothing.
 */
export class RedisBudgetStore implements BudgetStore {
  readonly #redis: Redis
  readonly #prefix: string
  readonly #ttlMs: number

  constructor(redis: Redis, options: { prefix?: string; ttlMs?: number } = {}) {
    this.#redis = redis
    this.#prefix = options.prefix ?? 'tollgate:budget:'
    this.#ttlMs = options.ttlMs ?? 86_400_000
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
    const [code, reserve, spare] = await this.#run(FAIR_SCRIPT, `${this.#prefix}fair:${plan.key}`, args.map(String))
    const from = code === 1 ? 'reserve' : code === 2 ? 'spare' : 'spent'
    return { from, reserve: reserve as number, spare: spare as number }
  }

  async takeNaive(plan: NaivePlan, now: number): Promise<NaiveTaken> {
    const [code, level] = await this.#run(
      NAIVE_SCRIPT,
      `${this.#prefix}naive:${plan.key}`,
      [now, plan.capacity, plan.rate, this.#ttlMs].map(String),
    )
    return { admitted: code === 1, level: level as number }
  }

  async #run(script: string, key: string, args: string[]): Promise<number[]> {
    let answer: unknown
    try {
      answer = await this.#redis.eval(script, 1, key, ...args)
    } catch (error) {
      throw new BudgetStoreError({ cause: error })
    }
    return (answer as string[]).map(Number)
  }
}
