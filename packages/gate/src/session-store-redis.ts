// 2025-era sessions shared by every quenchz replica on one Redis: one key per open session (expiring when idle),
// plus two sorted sets by last use (all sessions, and each owner's) so the caps hold across replicas. Each operation
// is one Lua script, so it is atomic whatever the replicas do at the same time. Every key a script touches is named
// in its KEYS or shares their hash tag: on a Redis Cluster all of a deployment's session keys start with
// `{<prefix>}`, so they live in one slot (the caps count every session, so they cannot be spread) and each script
// stays one atomic step.
import type { SessionCaps, SessionStore } from '@tollgate/mcp-endpoint'
import type { Cluster, Redis } from 'ioredis'
import { GateConfigError } from './errors.js'
import { redisScript } from './internal/redis-script.js'

// KEYS: the set of all sessions, the owner's set, the session's key. An evicted session's key is built from the
// prefix (ARGV[1]) and so shares the slot of the others.
const OPEN = `
local p, key, owner = ARGV[1], ARGV[2], ARGV[3]
local now, idle, max, maxOwner = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local all, own, session = KEYS[1], KEYS[2], KEYS[3]
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
redis.call('SET', session, owner, 'PX', idle)
redis.call('ZADD', all, now, key)
redis.call('ZADD', own, now, key)
redis.call('PEXPIRE', own, idle)
return 1
`

// KEYS: the session's key, the set of all sessions; the owner's set is read from the session (same slot).
const TOUCH = `
local p, key = ARGV[1], ARGV[2]
local now, idle = tonumber(ARGV[3]), tonumber(ARGV[4])
local owner = redis.call('GET', KEYS[1])
if not owner then return 0 end
redis.call('PEXPIRE', KEYS[1], idle)
redis.call('ZADD', KEYS[2], now, key)
redis.call('ZADD', p .. 'o:' .. owner, now, key)
redis.call('PEXPIRE', p .. 'o:' .. owner, idle)
return 1
`

const CLOSE = `
local p, key = ARGV[1], ARGV[2]
local owner = redis.call('GET', KEYS[1])
if not owner then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], key)
redis.call('ZREM', p .. 'o:' .. owner, key)
return 1
`

// Sent by SHA1 (EVALSHA), the text only on a connection's first call or after Redis answers NOSCRIPT (an EVALSHA
// answered NOSCRIPT ran nothing, so the EVAL that follows is the operation's only run; internal/redis-script.ts).
const OPEN_S = redisScript('tollgateSessionOpen', OPEN)
const TOUCH_S = redisScript('tollgateSessionTouch', TOUCH)
const CLOSE_S = redisScript('tollgateSessionClose', CLOSE)

/**
 * Open sessions in Redis, for several replicas: one Redis (a URL, or a Sentinel-watched master) or a Redis Cluster.
 * Idle expiry is Redis's own key expiry (its clock, not the caller's `nowMs`). Redis errors propagate: the endpoint
 * answers 503 and assumes nothing.
 */
export class RedisSessionStore implements SessionStore {
  readonly #redis: Redis | Cluster
  /** What every key starts with: the prefix, on a Cluster as a hash tag (`{<prefix>}`). */
  readonly #p: string

  /**
   * `prefix` namespaces the keys (default 'tollgate:sessions:'); replicas serving one deployment share it. On a
   * Cluster it may not hold `{` or `}` (GateConfigError).
   */
  constructor(redis: Redis | Cluster, prefix = 'tollgate:sessions:') {
    this.#redis = redis
    if (redis.isCluster && /[{}]/.test(prefix))
      throw new GateConfigError('on a Redis Cluster the session key prefix may not hold { or }')
    this.#p = redis.isCluster ? `{${prefix}}` : prefix
  }

  async open(key: string, owner: string, nowMs: number, caps: SessionCaps): Promise<boolean> {
    const p = this.#p
    const maxOwner = Math.min(caps.maxPerOwner, 1_000_000_000)
    const keys = [`${p}all`, `${p}o:${owner}`, `${p}s:${key}`]
    const r = await OPEN_S.run(this.#redis, keys, [p, key, owner, nowMs, caps.idleMs, caps.maxSessions, maxOwner])
    return r === 1
  }

  async touch(key: string, nowMs: number, idleMs: number): Promise<boolean> {
    const p = this.#p
    return (await TOUCH_S.run(this.#redis, [`${p}s:${key}`, `${p}all`], [p, key, nowMs, idleMs])) === 1
  }

  async close(key: string): Promise<boolean> {
    const p = this.#p
    return (await CLOSE_S.run(this.#redis, [`${p}s:${key}`, `${p}all`], [p, key])) === 1
  }

  /** Sessions seen within `idleMs` of `nowMs`, across every replica (one ZCOUNT; for a metrics gauge). */
  async countOpen(nowMs: number, idleMs: number): Promise<number> {
    return await this.#redis.zcount(`${this.#p}all`, `(${nowMs - idleMs}`, '+inf')
  }
}
