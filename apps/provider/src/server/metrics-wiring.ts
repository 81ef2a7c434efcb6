// The provider's metrics: made only with the admin listener that serves them, and the gauges read at scrape time.
import type { LegacySessions } from '@tollgate/mcp-endpoint'
import { toolTable } from '../mcp/tool-table.js'
import { ProviderMetrics } from '../metrics.js'
import type { ProviderRules } from '../rules/provider-rules.js'
import type { Store } from '../store/store.js'

/** Metrics exist only with the admin listener that serves them: without it, no call pays for them. */
export function providerMetrics(adminPort: number | undefined): ProviderMetrics | undefined {
  return adminPort === undefined ? undefined : new ProviderMetrics({ tools: toolTable().map((t) => t.tool.name) })
}

export interface WatchedState {
  rules: ProviderRules
  store: Store
  legacy: LegacySessions
  now: () => number
  /** Sessions idle this long no longer count as open. */
  sessionIdleMs: number
}

/** Calls in progress, keys pending (read at most every 15 s: it scans a table) and open 2025-era sessions. */
export function watchProviderState(metrics: ProviderMetrics, state: WatchedState): void {
  const { rules, store, legacy, now, sessionIdleMs } = state
  metrics.watch({
    inProgress: () => rules.inProgress,
    pending: cachedFor(15_000, () => store.countPending?.()),
    openSessions: () => legacy.store.countOpen?.(now(), sessionIdleMs) ?? Promise.resolve(undefined),
  })
}

/** `read`, asked at most once per `ms` (a scrape-time count that scans a table; concurrent scrapes share one read). */
function cachedFor<T>(ms: number, read: () => Promise<T> | undefined): () => Promise<T | undefined> {
  let last: { at: number; value: Promise<T | undefined> } | undefined
  return () => {
    const at = performance.now()
    if (last === undefined || at - last.at >= ms) {
      const value = (read() ?? Promise.resolve(undefined)).catch(() => {
        last = undefined
        return undefined
      })
      last = { at, value }
    }
    return last.value
  }
}
