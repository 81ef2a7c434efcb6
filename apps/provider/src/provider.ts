// startProvider: a short composition of named steps (options checked, the public port listening, the admin port, the
// store opened, billing and rules, the handler wiring, the purge job and metrics), each thing it starts added to one
// closer stack: a start that fails halfway stops exactly what had started, and a stop stops everything.
import { Closers, type RunningAdminServer, type ShutdownReport } from '@tollgate/operability'
import type { Logger } from 'pino'
import { createAdmission } from './http/authorize.js'
import type { ToolEntry } from './mcp/tool-table.js'
import { billingAndRules, checkMerchantPort } from './server/billing-and-rules.js'
import { checkProviderOptions } from './server/check-options.js'
import { wireDoor } from './server/door.js'
import { listenPublic, type PublicListener, startAdmin } from './server/listeners.js'
import { defaultLogger } from './server/log-facts.js'
import { providerMetrics, watchProviderState } from './server/metrics-wiring.js'
import type { ProviderOptions, RunningProvider } from './server/options.js'
import { runningProvider } from './server/running.js'
import { waitForStore } from './server/store-opening.js'
import { startPurgeJob } from './store/purge.js'

export type { ProviderOptions, RunningProvider, StoreOptions } from './server/options.js'

/**
 * Starts a merchant-provider/v1 server: MCP at `path`, REST at /v1/… on the same port, GET /livez and /readyz on it
 * (unauthenticated; /readyz probes the store). Throws TypeError/RangeError on bad options, before listening. It
 * listens before opening the store: a store that cannot be reached yet is waited for (logged once; /livez 200,
 * /readyz 503 and every other request `503 unavailable` meanwhile), and the promise resolves once it has opened.
 */
export async function startProvider(options: ProviderOptions): Promise<RunningProvider> {
  const { environment, verifier, retentionDays, path, adminPort } = checkProviderOptions(options)
  const metrics = providerMetrics(adminPort)
  const admission = createAdmission({
    verifier,
    environment,
    ...(options.publicHost !== undefined && { publicHost: options.publicHost }),
    ...(options.stripPrefix !== undefined && { stripPrefix: options.stripPrefix }),
    ...(options.bearerToken !== undefined && { bearerToken: options.bearerToken }),
    ...(options.edgeHeaders !== undefined && { edgeHeaders: options.edgeHeaders }),
    ...(metrics !== undefined && { onVerified: (position: 1 | 2) => metrics.signatureVerified(position) }),
  })
  const logger = options.logger === false ? undefined : (options.logger ?? (await defaultLogger()))
  const now = options.now ?? Date.now
  // A merchant's port is checked before anything listens (the demo ledger needs the store, so it is checked later).
  const checkedPort = await checkMerchantPort(options)
  const closers = new Closers()
  try {
    const front = await listenPublic(options, logger)
    closers.add('public listener', () => front.cut())
    const admin =
      metrics !== undefined && adminPort !== undefined
        ? await startAdmin(options, adminPort, metrics, front.health, logger)
        : undefined
    if (admin !== undefined) closers.add('admin server', () => admin.close())
    const store = await waitForStore(options, logger)
    closers.add('store', () => store.close())
    const served = await billingAndRules(options, store, checkedPort, metrics, now)
    const calls = {
      rules: served.rules,
      tools: served.tools,
      logger,
      metrics,
      // Sandbox answers name the schema paths of an invalid port object; production answers keep them in the log.
      namesFaultPaths: environment === 'sandbox',
    }
    const door = await wireDoor({ options, path, calls, admission, logger, metrics, now, closers })
    front.serve(door.serve)
    front.health.setCheck('store', () => store.probe())
    // An outage seen by a call drops readiness's cached answer and any round already running (its probe may have
    // passed just before): /readyz reports even a switch shorter than its cache.
    store.onOutage?.(() => front.health.invalidate())
    const purge = startPurgeJob({ store, retentionDays, now, logger })
    closers.add('purge job', () => purge.stop())
    if (metrics !== undefined) {
      const sessionIdleMs = options.sessionIdleTtlMs ?? 300_000
      watchProviderState(metrics, { rules: served.rules, store, legacy: door.legacy, now, sessionIdleMs })
    }
    logListening(logger, front, { path, environment, tls: options.tls !== undefined, tools: calls.tools })
    const stop = stopInOrder(front, admin, closers)
    return runningProvider({ ...served, path, environment, verifier, front, admin, store, door, metrics, logger, stop })
  } catch (error) {
    // What had started, newest first; the start's own error is the one worth reporting.
    await closers.closeAll().catch(() => {})
    throw error
  }
}

/**
 * The one stop (a second call returns the first one's promise). Traffic stops first: the public port drains (requests
 * already received finish on an open store), then the admin port closes; then the stack stops the rest newest first
 * (purge job, sessions, MCP handler, store), its listeners' closers finding them closed by then.
 */
function stopInOrder(
  front: PublicListener,
  admin: RunningAdminServer | undefined,
  closers: Closers,
): (how: { deadlineMs?: number; delayMs?: number }) => Promise<ShutdownReport> {
  let stopping: Promise<ShutdownReport> | undefined
  return (how) => {
    stopping ??= front.graceful.close(how).then(async (report) => {
      await admin?.close()
      await closers.closeAll()
      return report
    })
    return stopping
  }
}

function logListening(
  logger: Logger | undefined,
  front: PublicListener,
  facts: { path: string; environment: string; tls: boolean; tools: readonly ToolEntry[] },
): void {
  logger?.info(
    {
      host: front.host,
      port: front.port,
      path: facts.path,
      rest: '/v1/',
      environment: facts.environment,
      tls: facts.tls,
      tools: facts.tools.map((t) => t.tool.name),
    },
    'provider listening',
  )
}
