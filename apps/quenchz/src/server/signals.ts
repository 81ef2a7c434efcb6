// What quenchz does on its own once serving: stop on SIGTERM/SIGINT, re-read its TLS pair on SIGHUP, and keep the
// live cache pruned.
import { X509Certificate } from 'node:crypto'
import { readTlsFiles } from '@tollgate/mcp-endpoint'
import { type Closers, serialReloader } from '@tollgate/operability'
import type { Logger } from 'pino'
import { CACHE_PRUNE_INTERVAL_MS, pruneCache } from './cache-folder.js'
import type { ServePlan } from './serve-plan.js'
import type { RunningQuenchz } from './start-quenchz.js'

/**
 * SIGTERM or SIGINT: a graceful stop — /readyz 503 at once; on SIGTERM (what orchestrators send) serving goes on for
 * the delay, so a balancer takes the replica out before it stops accepting; then every request already received
 * answered (up to the deadline), the admin port, the budget's Redis and the source closed, and exit 0. A second
 * signal during the stop ends the process at once (the signal's default action). SIGHUP is a reload, never a stop
 * (tlsReloader).
 */
export function stopOnSignals(
  closers: Closers,
  running: RunningQuenchz,
  timing: { deadlineMs: number; delayMs: number },
  log: Logger,
): void {
  const stop = (signal: NodeJS.Signals) => {
    const delayMs = signal === 'SIGTERM' ? timing.delayMs : 0
    log.info({ signal, deadlineMs: timing.deadlineMs, delayMs }, 'shutting down')
    void running
      .shutdown({ deadlineMs: timing.deadlineMs, delayMs })
      .then(({ cut }) => {
        if (cut > 0) log.warn({ cut }, 'requests cut at the shutdown deadline')
      })
      .catch((error: unknown) => log.error({ err: error }, 'shutdown failed'))
      .then(() => closers.closeAll())
      .finally(() => process.exit(0))
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, stop)
}

/**
 * SIGHUP: re-read --tls-cert and --tls-key. A pair that serves replaces the old one for new handshakes (connections
 * already open keep theirs; nothing is dropped), logged once with the new certificate's SHA-256 fingerprint; a pair
 * that cannot be read or does not serve is refused with one line naming which file and why, and the old pair stays.
 * Without TLS there is nothing to re-read: the signal is logged and serving goes on. Reloads run one at a time; a
 * SIGHUP during one is answered by one more reload after it.
 */
export function tlsReloader(tls: ServePlan['tls'], running: RunningQuenchz, log: Logger): () => void {
  const reload = async () => {
    if (tls === undefined) {
      log.info({ signal: 'SIGHUP' }, 'nothing to reload: serving without --tls-cert')
      return
    }
    const startedMs = performance.now()
    const credentials = await readTlsFiles(tls)
    running.setTls(credentials)
    const fingerprint256 = new X509Certificate(credentials.cert).fingerprint256
    const ms = Math.round((performance.now() - startedMs) * 10) / 10
    log.info({ signal: 'SIGHUP', fingerprint256, ms }, 'TLS certificate reloaded')
  }
  return serialReloader(reload, (error) => {
    const { code, which } = error as { code?: string; which?: string }
    log.error(
      { signal: 'SIGHUP', code: code ?? 'unknown', which: which ?? null, reason: (error as Error).message },
      'TLS reload refused: the old certificate is kept',
    )
  })
}

/** Prunes the live cache to its bounds at start and every hour; a pruning that fails is logged and tried again. */
export function keepCachePruned(file: string, limits: ServePlan['cacheLimits'], closers: Closers, log: Logger): void {
  const prune = () => {
    try {
      const report = pruneCache(file, limits)
      if (report.removedByAge + report.removedBySize > 0) log.info(report, 'cache pruned')
    } catch (error) {
      log.warn({ code: (error as { code?: string }).code ?? 'unknown' }, 'cache could not be pruned')
    }
  }
  prune()
  const timer = setInterval(prune, CACHE_PRUNE_INTERVAL_MS)
  timer.unref()
  closers.add('cache pruning', () => clearInterval(timer))
}
