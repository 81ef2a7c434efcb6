// Opening the store at start: waited for while it cannot be reached (the server already listens meanwhile).
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import { StoreError } from '../errors.js'
import { openPostgresStore } from '../store/postgres-store.js'
import { openSqliteStore } from '../store/sqlite-store.js'
import type { Store } from '../store/store.js'
import type { ProviderOptions, StoreOptions } from './options.js'

async function openStore(options: StoreOptions | undefined): Promise<Store> {
  const s = options ?? { kind: 'sqlite', file: 'tollgate-provider.sqlite' }
  return s.kind === 'sqlite'
    ? openSqliteStore(s.file, s.durability !== undefined ? { durability: s.durability } : {})
    : openPostgresStore({ connectionString: s.connectionString, ...(s.schema !== undefined && { schema: s.schema }) })
}

/** Retry delays while the store cannot be reached at start: 0.5 s doubling to 5 s. */
const STORE_RETRY_FIRST_MS = 500
const STORE_RETRY_MAX_MS = 5_000

/**
 * Opens the store; while that fails with an outage (the database unreachable, starting up, out of disk), tries again
 * with backoff until it opens or `signal` aborts (rejecting with the signal's reason). Any other failure (credentials,
 * permissions, a bad file) is thrown at once: waiting would not fix it. `waiting` is told once, with the first outage.
 */
async function openStoreWhenReachable(
  options: StoreOptions | undefined,
  signal: AbortSignal | undefined,
  waiting: (error: StoreError) => void,
): Promise<Store> {
  let delayMs = STORE_RETRY_FIRST_MS
  let told = false
  for (;;) {
    signal?.throwIfAborted()
    try {
      return await openStore(options)
    } catch (error) {
      if (!(error instanceof StoreError) || error.outage === undefined) throw error
      if (!told) waiting(error)
      told = true
    }
    // An abort ends the wait at once; the loop's first line then throws the signal's own reason (timers would reject
    // with their AbortError instead).
    await sleep(delayMs, undefined, signal === undefined ? {} : { signal }).catch(() => {})
    delayMs = Math.min(delayMs * 2, STORE_RETRY_MAX_MS)
  }
}

/** The store of `options.store`, once open: an outage at start is logged once and told to onWaitingForStore. */
export function waitForStore(options: ProviderOptions, logger: Logger | undefined): Promise<Store> {
  return openStoreWhenReachable(options.store, options.signal, (error) => {
    logger?.warn(
      { store_error: error.outage },
      'the store cannot be reached: waiting for it (retrying with backoff; /readyz answers 503 meanwhile)',
    )
    options.onWaitingForStore?.(error)
  })
}
