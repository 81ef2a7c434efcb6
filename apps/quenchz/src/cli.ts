// `quenchz [--port 8931] --tokens-file PATH [...]`: the MCP server with an in-process issuer (or a real issuer's
// JWKS), and `quenchz tokens --tokens-file PATH`: fresh tokens for a running server. Serving is a sequence of named
// steps; every resource a step opens is closed in reverse order when a later step fails or the process is stopped.
import { X509Certificate } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type Audience,
  type Budget,
  type BudgetStoreEvent,
  type Clock,
  createAudience,
  FairScheduler,
  type GateEvent,
  type HostAllowList,
  type InProcessIssuer,
  loopbackAllowList,
  manualClock,
  monotonicClock,
  OpenFairBudget,
  wallClock,
} from '@tollgate/gate'
import { readTlsFiles, type TlsCredentials } from '@tollgate/mcp-endpoint'
import { Health, type RunningAdminServer, startAdminServer } from '@tollgate/operability'
import { type Logger, pino } from 'pino'
import { createRatesTools, openSource, type RatesSource } from './rates/index.js'
import { CACHE_PRUNE_INTERVAL_MS, pruneCache } from './server/cache-folder.js'
import {
  type ClockName,
  helpText,
  parseFlags,
  SERVE_FLAGS,
  type ServePlan,
  servePlan,
  TOKENS_FLAGS,
  type UsageProblem,
} from './server/cli-options.js'
import { CALLERS, DEFAULT_PORT, ISSUER, SERVER_INFO } from './server/constants.js'
import {
  connectBudgetStore,
  probeJwks,
  type SharedBudgetStore,
  shownRedisTarget,
  shownUrl,
} from './server/deployment.js'
import { createQuenchzMetrics, type QuenchzMetrics } from './server/metrics.js'
import { isInside, repositoryRoot } from './server/repository-guard.js'
import {
  createKeptIssuer,
  issuerFromKeyFile,
  type KeyFile,
  keyPathFor,
  removeKeyFile,
  writeKeyFile,
} from './server/signing-key.js'
import { quenchzBudget, type RunningQuenchz, startQuenchz } from './server/start-quenchz.js'
import { buildTokenManifest, writeTokenManifest } from './server/token-manifest.js'

const here = dirname(fileURLToPath(import.meta.url))

/** This package's version: the literal the repository's version test pins to the root's (the installed bundle has
 * no package.json beside its code, so reading one at run time would fail there). */
export const VERSION: string = SERVER_INFO.version

export const HELP = helpText(
  `usage: quenchz --tokens-file PATH [options]      serve, minting tokens with an in-process issuer
       quenchz --jwks-url URL --issuer ISS [options]  serve, verifying a real issuer's tokens
       quenchz tokens --tokens-file PATH              fresh tokens for the quenchz serving with that file`,
  SERVE_FLAGS,
  `
With no --source, rates come from the ECB Data Portal (live), cached in SQLite. Offline:
  --source history --history eurofxref-hist.zip   (published at
  https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip) or --source recordings --recordings DIR.
Source: ECB statistics.`,
)

export const TOKENS_HELP = helpText(
  'usage: quenchz tokens --tokens-file PATH [--token-lifetime SECONDS]\n\nRewrites PATH with six fresh tokens signed by the key the running quenchz keeps beside it.',
  TOKENS_FLAGS,
)

/** Exit codes by outcome. */
export const EXIT = { usage: 2, refused: 1, failed: 1 } as const

export interface CliIo {
  stderr: (line: string) => void
  /** Help and version; default process.stdout. */
  stdout?: (line: string) => void
  /** false: do everything up to (not including) listening — the README command test stubs serving this way. */
  serve?: boolean
  cwd?: string
  env?: NodeJS.ProcessEnv
}

const defaultIo: CliIo = { stderr: (l) => process.stderr.write(`${l}\n`) }

/**
 * Runs the CLI. Resolves with an exit code on help, version, refusal or failure, with 0 when `serve` is false, and
 * with 'serving' once the server listens (it then runs until SIGINT/SIGTERM).
 */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<number | 'serving'> {
  const out = io.stdout ?? ((l: string) => process.stdout.write(`${l}\n`))
  if (argv[0] === 'tokens') return remintTokens(argv.slice(1), io, out)
  const parsed = parseFlags(argv, SERVE_FLAGS)
  if ('help' in parsed) return done(out, HELP)
  if ('version' in parsed) return done(out, `quenchz ${VERSION}`)
  if ('problem' in parsed) return usage(io, parsed)
  const cwd = io.cwd ?? process.cwd()
  const plan = servePlan(parsed.values, cwd, io.env ?? process.env)
  if ('problem' in plan) return usage(io, plan)
  return serve(plan, io, cwd)
}

function done(out: (line: string) => void, text: string): number {
  out(text)
  return 0
}

/** The usage-error convention of every CLI here: one line naming the flag, then where help is. */
function usage(io: CliIo, problem: UsageProblem, bin = 'quenchz'): number {
  io.stderr(`${bin}: ${problem.problem}`)
  io.stderr(`see ${bin} --help`)
  return EXIT.usage
}

/** Closers of what has been opened so far, run newest first. */
class Opened {
  readonly #closers: Array<() => unknown> = []
  add(close: () => unknown): void {
    this.#closers.push(close)
  }
  async closeAll(): Promise<void> {
    for (const close of this.#closers.splice(0).reverse()) await close()
  }
}

/** The serving command, as named steps. */
async function serve(plan: ServePlan, io: CliIo, cwd: string): Promise<number | 'serving'> {
  const refusal = guardTokensPath(plan, cwd)
  if (refusal !== undefined) {
    io.stderr(refusal)
    return EXIT.refused
  }
  // With --budget-redis, 2025-era sessions live in the same Redis; replicas share MCP_SESSION_KEY.
  const sessionKey = (io.env ?? process.env).MCP_SESSION_KEY
  if (sessionKey !== undefined && sessionKey.length < 32) {
    return usage(io, {
      problem: 'MCP_SESSION_KEY must be at least 32 characters (the MAC key of 2025-era session ids)',
    })
  }
  const opened = new Opened()
  const fail = async (message?: string) => {
    if (message !== undefined) io.stderr(message)
    await opened.closeAll()
    return EXIT.failed
  }
  // Metrics only with an admin port to serve them on: without one, nothing is counted at all. Callers named in the
  // budget metrics are a set fixed by configuration (never every sub an issuer may mint): the seed's two, or the
  // policy's listed callers when there are few enough to be labels.
  const namedCallers =
    plan.policy === undefined
      ? Object.values(CALLERS)
      : Object.keys(plan.policy.callers ?? {}).length <= MAX_NAMED_CALLERS
        ? Object.keys(plan.policy.callers ?? {})
        : []
  const metrics =
    plan.admin === undefined ? undefined : createQuenchzMetrics({ namedCallers, jwks: plan.mode.kind === 'jwks' })
  const identity = await openIdentity(plan, metrics)
  if (typeof identity === 'string') return fail(identity)
  let tls: TlsCredentials | undefined
  if (plan.tls !== undefined) {
    try {
      tls = await readTlsFiles(plan.tls)
    } catch (error) {
      return fail(`quenchz: --tls-cert/--tls-key: ${(error as Error).message}`)
    }
  }
  const scheme = tls === undefined ? 'http' : 'https'
  // The log exists once serving is certain; what the budget store notices before that goes to stderr as a line.
  let log: Logger | undefined
  // A Redis that cannot be reached yet is not fatal: quenchz listens, /readyz says 503 until Redis answers.
  let shared: SharedBudgetStore | undefined
  if (plan.redis !== undefined) {
    shared = await connectBudgetStore(plan.redis, {
      prefix: plan.prefix,
      commandTimeoutMs: plan.redisTimeoutMs,
      replicas: plan.redisReplicas,
      onLostState: plan.onLostState,
      onConnection: (message) => io.stderr(message),
      onStoreEvent: (event) => logStoreEvent(event, plan.prefix, log, io),
    })
    opened.add(() => shared?.close())
  }
  const source = await openRatesSource(plan, metrics)
  if (typeof source === 'string') return fail(source)
  opened.add(() => source.close())

  // The manifest before listening, so a runner waiting for it knows the server is about to answer.
  const shownHost = plan.host.includes(':') ? `[${plan.host}]` : plan.host
  const endpointPath = new URL(plan.resource).pathname
  const mint = (url: string) => writeTokens(plan, identity, url, io, opened)
  if (plan.port !== 0 && !(await mint(`${scheme}://${shownHost}:${plan.port}${endpointPath}`))) return fail()
  if (io.serve === false) {
    await opened.closeAll()
    return 0
  }
  log = pino({ level: plan.logLevel, base: { service: 'quenchz' } }, pino.destination(2))
  const health = readiness(shared, log)
  let running: RunningQuenchz
  try {
    running = await startQuenchz({
      tools: createRatesTools({ source }),
      audience: identity.audience,
      host: plan.host,
      port: plan.port,
      budget: budgetOf(plan, shared),
      allowList: allowListOf(plan),
      scheduler: new FairScheduler({ perCaller: plan.maxInFlight, maxWaitingPerCaller: plan.maxWaiting }),
      advertisedScopes: plan.advertisedScopes,
      onEvent: logEvent(log),
      health,
      shutdownDeadlineMs: plan.shutdownTimeoutMs,
      ...(metrics !== undefined && { metrics }),
      ...(shared !== undefined && { sessionStore: shared.sessions }),
      ...(sessionKey !== undefined && { sessionKey }),
      ...(tls !== undefined && { tls }),
    })
  } catch (error) {
    // The manifest went out before listening; a server that never listened must not leave live tokens behind.
    if (plan.tokensPath !== undefined && identity.issuer !== undefined) removeKeyFile(plan.tokensPath)
    return fail(listenFailure(error, shownHost, plan.port))
  }
  opened.add(() => running.close())
  let admin: RunningAdminServer | undefined
  if (plan.admin !== undefined && metrics !== undefined) {
    try {
      admin = await startAdminServer({
        ...plan.admin,
        registry: metrics.registry,
        health,
        onError: (error) => log.error({ err: error }, 'metrics could not be collected'),
      })
    } catch (error) {
      if (plan.tokensPath !== undefined && identity.issuer !== undefined) removeKeyFile(plan.tokensPath)
      const adminHost = plan.admin.host.includes(':') ? `[${plan.admin.host}]` : plan.admin.host
      return fail(listenFailure(error, adminHost, plan.admin.port, '--admin-port', '--admin-host'))
    }
    const { close } = admin
    opened.add(close)
  }
  // The port is only known once bound; the manifest follows immediately.
  if (plan.port === 0 && !(await mint(running.url))) return fail()
  if (plan.source.kind === 'live') keepCachePruned(plan.source.cacheFile, plan.cacheLimits, opened, log)
  // Before the listening line: whoever waits for it may signal at once, and an unhandled SIGHUP would end the process.
  stopOnSignals(opened, running, { deadlineMs: plan.shutdownTimeoutMs, delayMs: plan.shutdownDelayMs }, log)
  reloadOnSighup(plan, running, log)
  io.stderr(announcement(plan, running.url, source))
  if (admin !== undefined) io.stderr(`quenchz admin listening on ${admin.url} (/metrics, /livez, /readyz)`)
  // However the process ends (an uncaught error included), the key that can mint tokens does not outlive it.
  const keptKey =
    plan.tokensPath !== undefined && identity.issuer !== undefined ? keyPathFor(plan.tokensPath) : undefined
  if (keptKey !== undefined) process.once('exit', () => removeKeyFile(keptKey))
  return 'serving'
}

/** Callers of a budget policy named one by one in the metrics at most; past it, all are counted as `other`. */
const MAX_NAMED_CALLERS = 50

/**
 * The budget every tools/call is charged to. With the in-process issuer: the seed's fair budget, exactly (agent-alpha
 * and agent-beta, 45/15). With --jwks-url: every verified sub is a caller of the open fair budget (its own reserve,
 * then the shared pool). In memory, or in Redis shared by replicas.
 */
function budgetOf(plan: ServePlan, shared: SharedBudgetStore | undefined): Budget {
  const clock = CLOCKS[plan.clock]()
  if (plan.policy === undefined) return quenchzBudget(clock, shared?.store)
  return new OpenFairBudget({ policy: plan.policy, clock, ...(shared !== undefined && { store: shared.store }) })
}

/**
 * One log line per change the budget store notices (never one per call): a charge failing (calls answered 503 until
 * it answers), answering again, Redis having lost the budget's state (the epoch key gone: reseeded or refusing), or
 * another replica having reseeded it.
 */
function logStoreEvent(event: BudgetStoreEvent, prefix: string, log: Logger | undefined, io: CliIo): void {
  const line = (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, msg: string) =>
    log !== undefined ? log[level](fields, msg) : io.stderr(`${msg} ${JSON.stringify(fields)}`)
  switch (event.kind) {
    case 'unavailable':
      line('warn', { cause: event.cause }, 'budget store failed: calls are answered 503 until it answers')
      return
    case 'available':
      line('info', {}, 'budget store answers again')
      return
    case 'state-lost':
      if (event.action === 'reseeded')
        line('error', { action: 'reseeded' }, 'the budget Redis lost its state: every caller starts full again')
      else
        line(
          'error',
          { action: 'refusing', acknowledge: `SET ${prefix}epoch acknowledged` },
          'the budget Redis lost its state: every call is refused until an operator acknowledges it',
        )
      return
    case 'epoch-changed':
      line('info', {}, 'the budget state was reseeded elsewhere (another replica or an operator); following it')
  }
}

/**
 * Readiness: the budget store answers (Redis PING on the budget's own connection; the in-memory budget always does)
 * and the server is not draining. The rates source is not checked: it is loaded before listening (a file that
 * cannot be read stops the start), and an unreachable ECB API is answered per call as `vendor_unavailable`, the same
 * on every replica, so taking one out of rotation would not help. Each change is logged once.
 */
function readiness(shared: SharedBudgetStore | undefined, log: Logger): Health {
  return new Health({
    ...(shared !== undefined && { checks: { 'budget-store': () => shared.ping() } }),
    onChange: ({ ready, failing }) => {
      if (ready) log.info('ready')
      else log.warn({ failing: failing.map((f) => f.name) }, 'not ready')
    },
  })
}

// 1. Never write bearer tokens (or the key that mints them) inside a checkout: neither this code's repository nor
// the one we stand in.
function guardTokensPath(plan: ServePlan, cwd: string): string | undefined {
  if (plan.tokensPath === undefined) return undefined
  const roots = [repositoryRoot(here), repositoryRoot(cwd)].filter((r): r is string => r !== undefined)
  return isInside(plan.tokensPath, roots, cwd)
    ? `refusing to write tokens inside the repository: ${plan.tokensPath}`
    : undefined
}

// 2. Who signs tokens: a fresh in-process key (kept beside the tokens file for `quenchz tokens`) or a real JWKS.
interface Identity {
  audience: Audience
  /** The in-process issuer and its private key (for the key file); absent with --jwks-url. */
  issuer: InProcessIssuer | undefined
  privateJwk: KeyFile['privateJwk'] | undefined
}

async function openIdentity(plan: ServePlan, metrics: QuenchzMetrics | undefined): Promise<Identity | string> {
  if (plan.mode.kind === 'jwks') {
    const unreachable = await probeJwks(plan.mode.jwksUrl)
    if (unreachable !== undefined) return unreachable
    const keys = {
      kind: 'jwks' as const,
      url: plan.mode.jwksUrl,
      ...plan.jwks,
      ...(metrics !== undefined && { onFetch: metrics.keySet }),
    }
    const audience = createAudience({ resource: plan.resource, issuer: plan.mode.issuer, keys })
    return { audience, issuer: undefined, privateJwk: undefined }
  }
  const { issuer, privateJwk } = await createKeptIssuer(plan.resource)
  const audience = createAudience({
    resource: plan.resource,
    issuer: ISSUER,
    keys: issuer.keySource(),
    algorithms: ['RS256'],
  })
  return { audience, issuer, privateJwk }
}

// 3. The rates source. The live cache's folder is created on first use.
async function openRatesSource(plan: ServePlan, metrics: QuenchzMetrics | undefined): Promise<RatesSource | string> {
  try {
    if (plan.source.kind === 'live') mkdirSync(dirname(plan.source.cacheFile), { recursive: true })
    return await openSource(plan.source, metrics?.upstream)
  } catch (error) {
    return `could not open the ${plan.source.kind} source: ${(error as Error).message.split('\n')[0]}`
  }
}

// 4. The tokens file and, beside it, the key file; both owner-only, and the key file removed when serving stops.
async function writeTokens(
  plan: ServePlan,
  { issuer, privateJwk }: Identity,
  url: string,
  io: CliIo,
  opened: Opened,
): Promise<boolean> {
  if (issuer === undefined || privateJwk === undefined || plan.tokensPath === undefined) return true
  const keyPath = keyPathFor(plan.tokensPath)
  try {
    const manifest = await buildTokenManifest(issuer, url, plan.clock, {
      resource: plan.resource,
      lifetimeSeconds: plan.tokenLifetimeSeconds,
    })
    writeTokenManifest(plan.tokensPath, manifest)
    opened.add(() => removeKeyFile(keyPath))
    writeKeyFile(keyPath, {
      issuer: issuer.issuer,
      resource: plan.resource,
      url,
      clock: plan.clock,
      tokenLifetimeSeconds: plan.tokenLifetimeSeconds,
      keyId: issuer.keyId,
      privateJwk,
    })
  } catch (error) {
    io.stderr(`could not write the tokens file: ${(error as Error).message}`)
    return false
  }
  io.stderr(`tokens written to ${plan.tokensPath} (valid ${plan.tokenLifetimeSeconds} s; renew: quenchz tokens)`)
  return true
}

/**
 * Hosts this server answers for: the loopback names on a loopback or wildcard bind, the bind address itself
 * otherwise, the public URL's host, and every --allowed-host. Origins follow the hosts, over http and https.
 */
export function allowListOf(plan: Pick<ServePlan, 'host' | 'resource' | 'allowedHosts'>): HostAllowList {
  const bind = plan.host.includes(':') && !plan.host.startsWith('[') ? `[${plan.host}]` : plan.host
  const loopbackOrAny = ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0', '[::]'].includes(bind.toLowerCase())
  const hosts = new Set(loopbackOrAny ? loopbackAllowList().hosts : [bind, `${bind}:*`])
  const publicHost = new URL(plan.resource).host
  hosts.add(publicHost)
  for (const extra of plan.allowedHosts) {
    hosts.add(extra)
    if (!/:(\d+|\*)$/.test(extra) || extra.endsWith(']')) hosts.add(`${extra}:*`)
  }
  const list = [...hosts].map((h) => h.toLowerCase())
  return { hosts: list, origins: list.flatMap((h) => [`http://${h}`, `https://${h}`]) }
}

function listenFailure(
  error: unknown,
  shownHost: string,
  port: number,
  portFlag = '--port',
  hostFlag = '--host',
): string {
  const code = (error as { code?: string }).code
  if (code === 'EADDRINUSE')
    return `quenchz: port ${port} on ${shownHost} is already in use (EADDRINUSE); choose another with ${portFlag} N, or ${portFlag} 0 for any free port`
  if (code === 'EACCES')
    return `quenchz: not allowed to listen on ${shownHost}:${port} (EACCES); ports below 1024 need privileges: choose another with ${portFlag}`
  if (code === 'EADDRNOTAVAIL')
    return `quenchz: ${shownHost} is not an address of this machine (EADDRNOTAVAIL); check ${hostFlag}`
  return `could not listen on ${shownHost}:${port}: ${(error as Error).message}`
}

function announcement(plan: ServePlan, url: string, source: RatesSource): string {
  const extras = [
    plan.mode.kind === 'jwks' ? `, tokens: ${shownUrl(plan.mode.jwksUrl)}` : '',
    plan.redis !== undefined ? `, budget: ${shownRedisTarget(plan.redis)} ${plan.prefix}` : '',
  ].join('')
  return `quenchz listening on ${url} as ${plan.resource} (source: ${source.kind}, budget clock: ${plan.clock}${extras})`
}

/**
 * SIGTERM or SIGINT: a graceful stop — /readyz 503 at once; on SIGTERM (what orchestrators send) serving goes on for
 * the delay, so a balancer takes the replica out before it stops accepting; then every request already received
 * answered (up to the deadline), the admin port, the budget's Redis and the source closed, and exit 0. A second
 * signal during the stop ends the process at once (the signal's default action). SIGHUP is a reload, never a stop
 * (reloadOnSighup).
 */
function stopOnSignals(
  opened: Opened,
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
      .then(() => opened.closeAll())
      .finally(() => process.exit(0))
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, stop)
}

/**
 * SIGHUP: re-read --tls-cert and --tls-key. A pair that serves replaces the old one for new handshakes (connections
 * already open keep theirs; nothing is dropped), logged once with the new certificate's SHA-256 fingerprint; a pair
 * that cannot be read or does not serve is refused with one line naming which file and why, and the old pair stays.
 * Without TLS there is nothing to re-read: the signal is logged and serving goes on. Reloads run one at a time; a
 * SIGHUP during one is taken after it.
 */
function reloadOnSighup(plan: ServePlan, running: RunningQuenchz, log: Logger): void {
  let reloading: Promise<void> = Promise.resolve()
  const reload = async () => {
    if (plan.tls === undefined) {
      log.info({ signal: 'SIGHUP' }, 'nothing to reload: serving without --tls-cert')
      return
    }
    const startedMs = performance.now()
    try {
      const credentials = await readTlsFiles(plan.tls)
      running.setTls(credentials)
      const fingerprint256 = new X509Certificate(credentials.cert).fingerprint256
      const ms = Math.round((performance.now() - startedMs) * 10) / 10
      log.info({ signal: 'SIGHUP', fingerprint256, ms }, 'TLS certificate reloaded')
    } catch (error) {
      const { code, which } = error as { code?: string; which?: string }
      log.error(
        { signal: 'SIGHUP', code: code ?? 'unknown', which: which ?? null, reason: (error as Error).message },
        'TLS reload refused: the old certificate is kept',
      )
    }
  }
  process.on('SIGHUP', () => {
    reloading = reloading.then(reload)
  })
}

/** Prunes the live cache to its bounds at start and every hour; a pruning that fails is logged and tried again. */
function keepCachePruned(file: string, limits: ServePlan['cacheLimits'], opened: Opened, log: Logger): void {
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
  opened.add(() => clearInterval(timer))
}

/**
 * Outcomes logged as `call refused`: each its own word, though over-budget and unknown-caller get the same answer
 * (concealment). unavailable: the budget store could not charge (503); abandoned: the client had gone first.
 */
const REFUSED: ReadonlySet<string> = new Set([
  'over-budget',
  'unknown-caller',
  'no-such-tool',
  'unavailable',
  'abandoned',
])

/**
 * One log line per event: `info` for a served call (caller, tool, outcome, where its unit came from, the budget left
 * after it, duration),
 * `warn` for every refusal with its reason. Never a token, an argument or a name the caller typed.
 */
export function logEvent(log: Logger): (event: GateEvent) => void {
  return (event) => {
    switch (event.kind) {
      case 'call': {
        const line = {
          sub: event.caller,
          tool: event.tool ?? null,
          outcome: event.outcome,
          charged: event.charged ?? null,
          left: event.left ?? null,
          ms: Math.round(event.durationMs * 10) / 10,
        }
        if (REFUSED.has(event.outcome)) log.warn(line, 'call refused')
        else log.info(line, 'call')
        return
      }
      case 'refused-token':
        log.warn({ reason: event.code, library: event.libraryError }, 'token refused')
        return
      case 'refused-queue-full':
        log.warn({ sub: event.caller, tool: null, outcome: 'queue-full', limit: event.limit }, 'call refused')
        return
      case 'refused-host':
        log.warn({ status: event.status }, 'host refused')
        return
      case 'fault':
        // A budget store that cannot charge is logged once per outage by the store itself (logStoreEvent); each call
        // it refused is its own 'call refused' line with outcome 'unavailable'.
        if (event.code === 'budget-store') log.debug({ code: event.code, err: event.error }, 'server fault')
        else log.error({ code: event.code, tool: event.tool, err: event.error }, 'server fault')
    }
  }
}

/** Budget clocks by name; `wall` (epoch seconds) is the one replicas sharing Redis agree on. */
const CLOCKS: Record<ClockName, () => Clock> = {
  frozen: () => manualClock().now,
  monotonic: () => monotonicClock,
  wall: () => wallClock,
}

/** `quenchz tokens --tokens-file PATH [--token-lifetime S]`: fresh tokens from the key kept beside PATH. */
async function remintTokens(argv: readonly string[], io: CliIo, out: (line: string) => void): Promise<number> {
  const parsed = parseFlags(argv, TOKENS_FLAGS)
  if ('help' in parsed) return done(out, TOKENS_HELP)
  if ('problem' in parsed) return usage(io, parsed, 'quenchz tokens')
  if (!('values' in parsed)) return done(out, `quenchz ${VERSION}`)
  const cwd = io.cwd ?? process.cwd()
  const file = parsed.values['tokens-file'] as string | undefined
  if (file === undefined) return usage(io, { problem: '--tokens-file is required' }, 'quenchz tokens')
  const lifetimeRaw = parsed.values['token-lifetime'] as string | undefined
  const plan = servePlan({ 'tokens-file': file, 'token-lifetime': lifetimeRaw }, cwd, io.env ?? process.env)
  if ('problem' in plan) return usage(io, plan, 'quenchz tokens')
  const tokensPath = plan.tokensPath as string
  const refusal = guardTokensPath(plan, cwd)
  if (refusal !== undefined) {
    io.stderr(refusal)
    return EXIT.refused
  }
  try {
    const { issuer, kept } = await issuerFromKeyFile(keyPathFor(tokensPath))
    const lifetimeSeconds = lifetimeRaw === undefined ? kept.tokenLifetimeSeconds : plan.tokenLifetimeSeconds
    writeTokenManifest(
      tokensPath,
      await buildTokenManifest(issuer, kept.url, kept.clock, { resource: kept.resource, lifetimeSeconds }),
    )
    io.stderr(`tokens written to ${tokensPath} (valid ${lifetimeSeconds} s)`)
    return 0
  } catch (error) {
    io.stderr(`quenchz tokens: ${(error as Error).message}`)
    return EXIT.failed
  }
}

export { DEFAULT_PORT }
