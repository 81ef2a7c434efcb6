// A Lua script sent by its SHA1 (EVALSHA) instead of its text (EVAL), on one Redis or a Redis Cluster.
//
// The plain call is ioredis's own `defineCommand`: per connection (per socket, so per Cluster node, and again after
// a reconnect or a failover, whose new master starts with no scripts) the first call sends EVAL with the text, which
// also loads it there; every later call sends EVALSHA. When Redis answers NOSCRIPT (its script cache was emptied
// under an open connection: SCRIPT FLUSH) ioredis sends the same call again as EVAL. That retry never runs a script
// twice: an EVALSHA answered NOSCRIPT did not run the script at all (Redis looks the hash up before running
// anything), so the EVAL that follows is the script's only run, with the same arguments (the same deadline too: a
// charge's script still refuses to charge after it, though the EVAL gets a command timeout of its own).
import { createHash } from 'node:crypto'
import type { ChainableCommander, Cluster, Redis } from 'ioredis'

export interface RedisScript {
  /** Runs the script once (EVALSHA; EVAL on a connection's first call or after NOSCRIPT). */
  run(redis: Redis | Cluster, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown>
  /**
   * Adds the script's EVALSHA (no fallback) to a pipeline: inside a pipeline ioredis's NOSCRIPT retry would go out
   * on its own, after the pipeline's other commands; the caller checks {@link isNoScript} and sends its pipeline
   * again with {@link evalIn}.
   */
  evalshaIn(pipeline: ChainableCommander, keys: readonly string[], args: ReadonlyArray<string | number>): void
  /** Adds the script's EVAL (its text: it runs and is loaded) to a pipeline. */
  evalIn(pipeline: ChainableCommander, keys: readonly string[], args: ReadonlyArray<string | number>): void
}

type Defined = Record<string, (...args: Array<string | number>) => Promise<unknown>>

/** A script defined under `name` (e.g. `tollgateBudgetOpen`) on each client it runs on, once. */
export function redisScript(name: string, lua: string): RedisScript {
  const sha = createHash('sha1').update(lua).digest('hex')
  return {
    run(redis, keys, args) {
      const scripts = (redis as unknown as { scriptsSet: Record<string, { lua: string }> }).scriptsSet
      // Several stores on one client share the definition (and so its record of which sockets have the script).
      if (scripts[name]?.lua !== lua) redis.defineCommand(name, { numberOfKeys: keys.length, lua })
      const call = (redis as unknown as Defined)[name] as Defined[string]
      return call.call(redis, ...keys, ...args)
    },
    evalshaIn(pipeline, keys, args) {
      pipeline.evalsha(sha, keys.length, ...keys, ...args)
    },
    evalIn(pipeline, keys, args) {
      pipeline.eval(lua, keys.length, ...keys, ...args)
    },
  }
}

/** Whether a Redis error is NOSCRIPT: the EVALSHA found no script of that hash and ran nothing. */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT')
}
