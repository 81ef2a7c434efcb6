// The serving command as a composition of named steps (serve-steps.ts). Each resource is added to one closer stack as
// soon as it has started, so a start that fails halfway stops exactly what had started, and a stop stops everything,
// newest first.

import { FairScheduler } from '@tollgate/gate'
import { readTlsFiles, type TlsCredentials } from '@tollgate/mcp-endpoint'
import { Closers, type Health, type RunningAdminServer, startAdminServer } from '@tollgate/operability'
import { type Logger, pino } from 'pino'
import { createRatesTools } from '../rates/index.js'
import { type CliIo, EXIT, usage } from './cli-io.js'
import { connectBudgetStore, type SharedBudgetStore } from './deployment.js'
import { logEvent, logStoreEvent, readiness } from './logging.js'
import type { QuenchzMetrics } from './metrics.js'
import { tokensPathRefusal } from './repository-guard.js'
import type { ServePlan } from './serve-plan.js'
import * as step from './serve-steps.js'
import { keepCachePruned, stopOnSignals, tlsReloader } from './signals.js'
import { keyPathFor, removeKeyFile } from './signing-key.js'
import { startQuenchz } from './start-quenchz.js'

/** Serves `plan`: resolves with an exit code when it cannot (or `io.serve` is false), with 'serving' once it listens. */
export async function serve(plan: ServePlan, io: CliIo, cwd: string): Promise<number | 'serving'> {
  const refusal = tokensPathRefusal(plan.tokensPath, cwd)
  if (refusal !== undefined) {
    io.stderr(refusal)
    return EXIT.refused
  }
  // With --budget-redis, 2025-era sessions live in the same Redis; replicas share MCP_SESSION_KEY.
  const sessionKey = (io.env ?? process.env).MCP_SESSION_KEY
  if (sessionKey !== undefined && sessionKey.length < 32) {
    return usage(io, 'MCP_SESSION_KEY must be at least 32 characters (the MAC key of 2025-era session ids)')
  }
  const closers = new Closers()
  try {
    return await start(plan, io, closers, sessionKey)
  } catch (error) {
    if (error instanceof step.StartFailure && error.line !== undefined) io.stderr(error.line)
    await closers.closeAll()
    if (!(error instanceof step.StartFailure)) throw error
    return EXIT.failed
  }
}

/** The steps, in order; each resource joins `closers` as soon as it has started. */
async function start(
  plan: ServePlan,
  io: CliIo,
  closers: Closers,
  sessionKey: string | undefined,
): Promise<number | 'serving'> {
  const metrics = step.metricsFor(plan)
  const identity = orFail(await step.openIdentity(plan, metrics))
  const tls = await tlsOf(plan)
  // The log exists once serving is certain; what the budget store notices before that goes to stderr as a line.
  const logs: { log?: Logger } = {}
  const shared = await openBudgetStore(plan, io, closers, logs)
  const source = orFail(await step.openRatesSource(plan, metrics))
  closers.add('rates source', () => source.close())
  // The manifest before listening, so a runner waiting for it knows the server is about to answer.
  const mint = async (url: string) => {
    if (!(await step.writeTokens(plan, identity, url, io, closers))) throw new step.StartFailure(undefined)
  }
  const endpointPath = new URL(plan.resource).pathname
  const scheme = tls === undefined ? 'http' : 'https'
  if (plan.port !== 0) await mint(`${scheme}://${step.shownHost(plan.host)}:${plan.port}${endpointPath}`)
  if (io.serve === false) {
    await closers.closeAll()
    return 0
  }
  const log = pino({ level: plan.logLevel, base: { service: 'quenchz' } }, pino.destination(2))
  logs.log = log
  const health = readiness(shared, log)
  // The manifest went out before listening; a server that never listened must not leave live tokens behind.
  const forgetTokens = () => {
    if (plan.tokensPath !== undefined && identity.issuer !== undefined) removeKeyFile(plan.tokensPath)
  }
  const running = await startQuenchz({
    tools: createRatesTools({ source }),
    audience: identity.audience,
    host: plan.host,
    port: plan.port,
    budget: step.budgetFor(plan, shared),
    allowList: step.allowListOf(plan),
    scheduler: new FairScheduler({ perCaller: plan.maxInFlight, maxWaitingPerCaller: plan.maxWaiting }),
    advertisedScopes: plan.advertisedScopes,
    onEvent: logEvent(log),
    health,
    shutdownDeadlineMs: plan.shutdownTimeoutMs,
    ...(metrics !== undefined && { metrics }),
    ...(shared !== undefined && { sessionStore: shared.sessions }),
    ...(sessionKey !== undefined && { sessionKey }),
    ...(tls !== undefined && { tls }),
  }).catch((error: unknown) => {
    forgetTokens()
    throw new step.StartFailure(step.listenFailure(error, plan.host, plan.port))
  })
  closers.add('quenchz', () => running.close())
  const admin = await startAdmin(plan, metrics, health, log, forgetTokens)
  if (admin !== undefined) closers.add('admin server', admin.close)
  // The port is only known once bound; the manifest follows immediately.
  if (plan.port === 0) await mint(running.url)
  if (plan.source.kind === 'live') keepCachePruned(plan.source.cacheFile, plan.cacheLimits, closers, log)
  // Before the listening line: whoever waits for it may signal at once, and an unhandled SIGHUP would end the process.
  stopOnSignals(closers, running, { deadlineMs: plan.shutdownTimeoutMs, delayMs: plan.shutdownDelayMs }, log)
  process.on('SIGHUP', tlsReloader(plan.tls, running, log))
  io.stderr(step.announcement(plan, running.url, source))
  if (admin !== undefined) io.stderr(`quenchz admin listening on ${admin.url} (/metrics, /livez, /readyz)`)
  // However the process ends (an uncaught error included), the key that can mint tokens does not outlive it.
  if (plan.tokensPath !== undefined && identity.issuer !== undefined) {
    const keptKey = keyPathFor(plan.tokensPath)
    process.once('exit', () => removeKeyFile(keptKey))
  }
  return 'serving'
}

/** The admin listener (metrics, /livez, /readyz) when --admin-port is given. */
async function startAdmin(
  plan: ServePlan,
  metrics: QuenchzMetrics | undefined,
  health: Health,
  log: Logger,
  forgetTokens: () => void,
): Promise<RunningAdminServer | undefined> {
  if (plan.admin === undefined || metrics === undefined) return undefined
  const { host, port } = plan.admin
  try {
    return await startAdminServer({
      host,
      port,
      registry: metrics.registry,
      health,
      onError: (error) => log.error({ err: error }, 'metrics could not be collected'),
    })
  } catch (error) {
    forgetTokens()
    throw new step.StartFailure(step.listenFailure(error, host, port, { port: '--admin-port', host: '--admin-host' }))
  }
}

/** A step's value, or a StartFailure with the line it returned. */
function orFail<T>(result: T | string): T {
  if (typeof result === 'string') throw new step.StartFailure(result)
  return result
}

/** --tls-cert and --tls-key, read before anything listens. */
async function tlsOf(plan: ServePlan): Promise<TlsCredentials | undefined> {
  if (plan.tls === undefined) return undefined
  try {
    return await readTlsFiles(plan.tls)
  } catch (error) {
    throw new step.StartFailure(`quenchz: --tls-cert/--tls-key: ${(error as Error).message}`)
  }
}

/** A Redis that cannot be reached yet is not fatal: quenchz listens, /readyz says 503 until Redis answers. */
async function openBudgetStore(
  plan: ServePlan,
  io: CliIo,
  closers: Closers,
  logs: { log?: Logger },
): Promise<SharedBudgetStore | undefined> {
  if (plan.redis === undefined) return undefined
  const shared = await connectBudgetStore(plan.redis, {
    prefix: plan.prefix,
    commandTimeoutMs: plan.redisTimeoutMs,
    replicas: plan.redisReplicas,
    onLostState: plan.onLostState,
    onConnection: (message) => io.stderr(message),
    onStoreEvent: (event) => logStoreEvent(event, plan.prefix, logs.log, io.stderr),
  })
  closers.add('budget store', () => shared.close())
  return shared
}
