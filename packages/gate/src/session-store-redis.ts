// 2025-era sessions shared by every quenchz replica on one Redis: one key per open session (expiring when idle),
// plus two sorted sets by last use (all sessions, and each owner's) so the caps hold across replicas. Each operation
// is one Lua script, so it is atomic whatever the replicas do at the same time.
import type { SessionCaps, SessionStore } from '@tollgate/mcp-endpoint'
import type { Redis } from 'ioredis'

const OPEN = `
local p, key, owner = ARGV[1], ARGV[2], ARGV[3]
local now, idle, max, maxOwner = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local all, own = p .. 'all', p .. 'o:' .. owner
redis.call('ZREMRANGEBYSCORE', all, '-inf', now - idle)
redis.call('ZREMRANGEBYSCORE', own, '-inf', now - idle)
local mine = redis.call('ZRANGE', own, 0, -1)
local excess = #mine - (maxOwner - 1)
for i = 1, excess do
  redis.call('DEL', p .. 's:' .. mine[i])
  redis.call('ZREM', all, mine[i])
  redis.call('ZREM', own, mine[i])
end
if redis.call('ZCARD', all) >= max then return 0 end
redis.call('SET', p .. 's:' .. key, owner, 'PX', idle)
redis.call('ZADD', all, now, key)
redis.call('ZADD', own, now, key)
redis.call('PEXPIRE', own, idle)
return 1
`

const TOUCH = `
local p, key = ARGV[1], ARGV[2]
local now, idle = tonumber(ARGV[3]), tonumber(ARGV[4])
local owner = redis.call('GET', p .. 's:' .. key)
if not owner then return 0 end
redis.call('PEXPIRE', p .. 's:' .. key, idle)
redis.call('ZADD', p .. 'all', now, key)
redis.call('ZADD', p .. 'o:' .. owner, now, key)
redis.call('PEXPIRE', p .. 'o:' .. owner, idle)
return 1
`

const CLOSE = `
local p, key = ARGV[1], ARGV[2]
local owner = redis.call('GET', p .. 's:' .. key)
if not owner then return 0 end
redis.call('DEL', p .. 's:' .. key)
redis.call('ZREM', p .. 'all', key)
redis.call('ZREM', p .. 'o:' .. owner, key)
return 1
`

/**
 * Open sessions in Redis, for several replicas. Idle expiry is Redis's own key expiry (its clock, not the caller's
 * `nowMs`). Redis errors propagate: the endpoint answers 503 and assumes nothing.
 */
export class RedisSessionStore implements SessionStore {
  readonly #redis: Redis
  readonly #prefix: string

  /** `prefix` namespaces the keys (default 'tollgate:sessions:'); replicas serving one deployment share it. */
  constructor(redis: Redis, prefix = 'tollgate:sessions:') {
    this.#redis = redis
    this.#prefix = prefix
  }

  async open(key: string, owner: string, nowMs: number, caps: SessionCaps): Promise<boolean> {
    const maxOwner = Math.min(caps.maxPerOwner, 1_000_000_000)
    const r = await this.#redis.eval(OPEN, 0, this.#prefix, key, owner, nowMs, caps.idleMs, caps.maxSessions, maxOwner)
    return r === 1
  }

  async touch(key: string, nowMs: number, idleMs: number): Promise<boolean> {
    return (await this.#redis.eval(TOUCH, 0, this.#prefix, key, nowMs, idleMs)) === 1
  }

  async close(key: string): Promise<boolean> {
    return (await this.#redis.eval(CLOSE, 0, this.#prefix, key)) === 1
  }

  /** Sessions seen within `idleMs` of `nowMs`, across every replica (one ZCOUNT; for a metrics gauge). */
  async countOpen(nowMs: number, idleMs: number): Promise<number> {
    return await this.#redis.zcount(`${this.#prefix}all`, `(${nowMs - idleMs}`, '+inf')
  }
}
