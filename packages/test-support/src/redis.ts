// Finds Redis at 127.0.0.1:6379; the suite skips with the reason when it is absent, unless TOLLGATE_REQUIRE_SERVICES=1.
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'

export interface RedisProbe {
  redis: Redis | undefined
  /** Why the Redis suite is skipped; undefined when it runs. */
  skip: string | undefined
  /** A key prefix unique to this run, so concurrent runs never collide. */
  prefix: string
  cleanup(): Promise<void>
}

/** Connects to the local Redis; `label` starts this run's unique key prefix (e.g. 'gate-test'). */
export async function probeRedis(label: string): Promise<RedisProbe> {
  const prefix = `${label}:${randomUUID()}:`
  const redis = new Redis({
    host: '127.0.0.1',
    port: 6379,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    retryStrategy: () => null,
  })
  redis.on('error', () => {})
  try {
    await redis.connect()
    await redis.ping()
  } catch (error) {
    redis.disconnect()
    const reason = `Redis at 127.0.0.1:6379 is not reachable (${(error as Error).message})`
    if (process.env.TOLLGATE_REQUIRE_SERVICES === '1') throw new Error(`${reason}, and TOLLGATE_REQUIRE_SERVICES=1`)
    return { redis: undefined, skip: reason, prefix, cleanup: async () => {} }
  }
  return {
    redis,
    skip: undefined,
    prefix,
    async cleanup() {
      const keys = await redis.keys(`${prefix}*`)
      if (keys.length > 0) await redis.del(...keys)
      redis.disconnect()
    },
  }
}
