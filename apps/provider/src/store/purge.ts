// Retention: final keys and results are kept at least 30 days (configurable upward), then purged.
import type { Logger } from 'pino'
import type { Store } from './store.js'

export const MIN_RETENTION_DAYS = 30
const DAY_MS = 86_400_000

export interface PurgeJobOptions {
  store: Store
  /** ≥ 30; RangeError below. */
  retentionDays: number
  now?: () => number
  logger?: Logger | undefined
  /** Default hourly. */
  intervalMs?: number
}

/** Deletes final operations last changed more than retentionDays ago; returns how many. */
export async function purgeExpired(store: Store, retentionDays: number, nowMs: number): Promise<number> {
  if (!Number.isInteger(retentionDays) || retentionDays < MIN_RETENTION_DAYS) {
    throw new RangeError(`retentionDays must be a whole number ≥ ${MIN_RETENTION_DAYS}`)
  }
  return store.purge(nowMs - retentionDays * DAY_MS)
}

/** Runs purgeExpired now and then every intervalMs (timer unref'd). */
export function startPurgeJob(options: PurgeJobOptions): { stop(): Promise<void> } {
  const now = options.now ?? Date.now
  if (!Number.isInteger(options.retentionDays) || options.retentionDays < MIN_RETENTION_DAYS) {
    throw new RangeError(`retentionDays must be a whole number ≥ ${MIN_RETENTION_DAYS}`)
  }
  const run = () =>
    purgeExpired(options.store, options.retentionDays, now())
      .then((n) => {
        if (n > 0) options.logger?.info({ purged: n }, 'purged expired keys')
      })
      .catch(() => options.logger?.warn('purge failed; will retry'))
  let inflight = run()
  const timer = setInterval(() => {
    inflight = run()
  }, options.intervalMs ?? 3_600_000)
  timer.unref()
  return {
    stop: async () => {
      clearInterval(timer)
      await inflight
    },
  }
}
