// startProvider: wires signing admission, the MCP door and the REST routes, the rules, the store and the billing port.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler } from '@modelcontextprotocol/server'
import {
  BodyReader,
  type ConnectionLimits,
  createLimitedServer,
  createMcpEndpoint,
  defaultAllowList,
  type EndpointEvent,
  LegacySessions,
  replaceTlsCredentials,
  type SessionStore,
  type TlsCredentials,
} from '@tollgate/mcp-endpoint'
import {
  GracefulServer,
  Health,
  isHealthPath,
  type RunningAdminServer,
  type ShutdownReport,
  startAdminServer,
} from '@tollgate/operability'
import { SignatureVerifier, type SigningEnvironment, secretEnvironment } from '@tollgate/signing'
import type { Logger } from 'pino'
import { DemoLedger, type DemoLedgerOptions } from './billing/demo-ledger.js'
import type { BillingPort } from './billing/port.js'
import { checkBillingPort } from './billing/port-check.js'
import { DemoInProductionError, NoBillingError, NoSecretError, StoreError } from './errors.js'
import { createAdmission } from './http/authorize.js'
import { createLegacyFastPath, createModernFastPath } from './http/modern-fast-path.js'
import { createServer } from './mcp/create-server.js'
import { listedTools, toolTable } from './mcp/tool-table.js'
import { bodyRefusalReason, ProviderMetrics } from './metrics.js'
import { createRestHandler } from './rest/handler.js'
import { ProviderRules } from './rules/provider-rules.js'
import { checkSecretList } from './secrets.js'
import { demoLedgerStore } from './store/ledger-store.js'
import { PgSessionStore } from './store/pg-session-store.js'
import { openPostgresStore } from './store/postgres-store.js'
import { startPurgeJob } from './store/purge.js'
import { openSqliteStore, type SqliteDurability } from './store/sqlite-store.js'
import type { Store } from './store/store.js'

export type StoreOptions =
  /** durability: see openSqliteStore; default 'power-loss' (every commit fsynced). */
  | { kind: 'sqlite'; file: string; durability?: SqliteDurability }
  | { kind: 'postgres'; connectionString: string; schema?: string }

export interface ProviderOptions {
  /** Signing secrets: one, or two (old and new) while rotating. */
  secrets: readonly string[]
  /** Default: the secrets' environment by prefix (srmps_ sandbox, srmp_ production). Production refuses srmps_. */
  environment?: SigningEnvironment
  /**
   * Serve HTTPS with this certificate (PEM; the leaf first, then any intermediates) and key (PEM); default plain HTTP.
   * A pair that cannot serve throws TlsCredentialsError (ERR_MCP_ENDPOINT_TLS) before listening. See setTls.
   */
  tls?: TlsCredentials
  /** Listen address; default 127.0.0.1. */
  host?: string
  /** Listen port; default 0 (any free port). */
  port?: number
  /** MCP endpoint path; default /mcp. */
  path?: string
  /** Host name the platform signs (your public host); default: the request's Host header. */
  publicHost?: string
  /** Path prefix your reverse proxy strips before forwarding; the platform's signature covers it. */
  stripPrefix?: string
  /** Require `Authorization: Bearer <token>` on every request. */
  bearerToken?: string
  /** Require these headers with exactly these values on every request. */
  edgeHeaders?: Record<string, string>
  /** Default: SQLite file ./tollgate-provider.sqlite. */
  store?: StoreOptions
  /**
   * Your billing system; this or `demoLedger` is required (NoBillingError without either). In production (an srmp_
   * secret) it must be yours: a DemoLedger instance there throws DemoInProductionError, as does no billing at all.
   */
  billing?: BillingPort
  /**
   * Serve the demo ledger (fakemerchant data, persisted in the same store), opt-in and sandbox only: `{}` for the
   * defaults. With `billing` it is a TypeError (two billing systems); in production, DemoInProductionError.
   */
  demoLedger?: DemoLedgerOptions
  /** pino logger; false = silent. Default: pino at info on stderr. */
  logger?: Logger | false
  /** Keys and results are kept this many days after their last change; ≥ 30 (RangeError below). Default 30. */
  retentionDays?: number
  /** How long a key's in-progress claim blocks others before it counts as abandoned by a crash. Default 30 000 ms. */
  inProgressLeaseMs?: number
  /** 2026-07-28 responses: 'auto' (default: JSON unless notifications precede the result), 'json' or 'sse'. */
  responseMode?: 'json' | 'sse' | 'auto'
  /** 2025-era session responses: 'json' (default) or 'sse'. */
  legacyResponseMode?: 'json' | 'sse'
  /** Idle legacy sessions close after this long; default 300 000 ms. */
  sessionIdleTtlMs?: number
  /** Most open legacy sessions; default 1000. */
  maxSessions?: number
  /**
   * MAC key of 2025-era session ids (≥ 32 characters), the same on every replica. Default: random per process
   * (sessions then live only on this process).
   */
  sessionKey?: string
  /** Where open 2025-era sessions are recorded. Default: the PostgreSQL database with a postgres store, else memory. */
  sessionStore?: SessionStore
  /** Largest accepted request body; default 1 MiB (larger → 413). */
  maxBodyBytes?: number
  /** The whole body must arrive within this many ms (else 408); default 30 000. */
  bodyTimeoutMs?: number
  /** At most this many request bodies being received at once (else 503); default 256. */
  maxUnfinishedBodies?: number
  /** Header timeout, request timeout, keep-alive and connection caps (see @tollgate/mcp-endpoint). */
  connections?: ConnectionLimits
  /**
   * Host names this server answers for, besides localhost, 127.0.0.1, [::1], publicHost and the listen host (a
   * foreign Host gets 421, a foreign Origin 403). false turns the check off (only behind a proxy that checks).
   */
  allowedHosts?: readonly string[] | false
  /**
   * Answer well-formed tools/call requests (2026-07-28, and 2025-era sessions in JSON mode) without a per-request
   * McpServer (same bytes as the SDK). Default true.
   */
  modernFastPath?: boolean
  /** Clock for rules, ledger and purge (epoch ms); signatures always use the real clock. */
  now?: () => number
  /**
   * Port of the admin listener (GET /metrics for Prometheus, /livez, /readyz), separate from the public port. Off
   * unless given; 0 = any free port (see RunningProvider.adminUrl).
   */
  adminPort?: number
  /** Address of the admin listener; default 127.0.0.1 (keep it off the public network). */
  adminHost?: string
  /** How long `shutdown()` lets requests already received finish before cutting them; default 10 000 ms. */
  shutdownDeadlineMs?: number
  /**
   * How long `shutdown()` goes on serving as usual, with /readyz answering 503, before it stops accepting: the time a
   * load balancer's health checks take to take the server out of rotation. Default 0.
   */
  shutdownDelayMs?: number
  /**
   * Stops a start that is still waiting for its store (see startProvider): the promise rejects with the signal's
   * reason and nothing is left listening.
   */
  signal?: AbortSignal
  /** Told once, with the first failure, when the store cannot be reached at start and the start waits for it. */
  onWaitingForStore?: (error: StoreError) => void
}

export interface RunningProvider {
  /** The MCP endpoint: http://host:port/path (https:// with tls) */
  url: string
  /** The REST binding's base URL (what the platform is configured with): http://host:port (https:// with tls) */
  baseUrl: string
  /** Where the REST routes live: http://host:port/v1/ (https:// with tls) */
  restUrl: string
  port: number
  store: Store
  billing: BillingPort
  rules: ProviderRules
  /** The admin listener's base URL (http://host:port; /metrics, /livez, /readyz) when adminPort was given. */
  adminUrl?: string
  /** The provider's metrics (its prom-client registry is `metrics.registry`), when adminPort was given. */
  metrics?: ProviderMetrics
  /** Readiness as /readyz answers it (the store's probe, cached 1 s; false once shutting down). */
  health: Health
  /** Counters a test or bench can read: how many calls the fast paths answered (2026-07-28, 2025-era). */
  diagnostics: { readonly fastPathAnswered: number; readonly legacyFastPathAnswered: number }
  /**
   * Graceful stop (SIGTERM): /readyz answers 503 at once; after the delay (default shutdownDelayMs) no new connection
   * is accepted, every request already received is answered (requests arriving meanwhile on open connections too,
   * with `Connection: close`) up to the deadline (default shutdownDeadlineMs), then what is left is cut; then the
   * store and pools close. Calling it again, or close(), returns the same stop.
   */
  shutdown(options?: { deadlineMs?: number; delayMs?: number }): Promise<ShutdownReport>
  /** Immediate stop (tests): open connections are cut, then the store and pools close. */
  close(): Promise<void>
  /**
   * Replaces the TLS certificate and key (a server started with `tls`): new handshakes get the new pair, open
   * connections keep theirs, nothing in flight is cut. A pair that cannot serve throws TlsCredentialsError
   * (ERR_MCP_ENDPOINT_TLS) and the old pair is kept; so does a server started without tls.
   */
  setTls(credentials: TlsCredentials): void
  /**
   * Replaces the signing secrets at once (one, or two while rotating: the old first). Every request verified after
   * the call uses the new list; none is verified against a mix. Throws SecretsError and keeps the old secrets on an
   * empty list, more than two, a malformed secret, or a switch between sandbox and production.
   */
  setSecrets(secrets: readonly string[]): void
}

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
 * with backoff until it opens or `signal` aborts. Any other failure (credentials, permissions, a bad file) is thrown
 * at once: waiting would not fix it. `waiting` is told once, with the first outage.
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
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, delayMs)
      signal?.addEventListener('abort', done, { once: true })
      function done() {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        resolve()
      }
    })
    delayMs = Math.min(delayMs * 2, STORE_RETRY_MAX_MS)
  }
}

/** What every request other than /livez and /readyz gets while the store is not open yet. */
function answerStarting(_req: IncomingMessage, res: ServerResponse): void {
  const body = '{"error":{"code":"unavailable","message":"the provider is starting","retryable":true}}'
  res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' }).end(body)
}

/**
 * The billing system is chosen, never defaulted: the merchant's `billing`, or the demo ledger asked for by name
 * (`demoLedger`) in the sandbox. The demo ledger's invented customers and refunds never answer production traffic.
 */
function checkBillingChoice(options: ProviderOptions, environment: SigningEnvironment): void {
  const { billing, demoLedger } = options
  if (demoLedger !== undefined && (typeof demoLedger !== 'object' || demoLedger === null || Array.isArray(demoLedger)))
    throw new TypeError('demoLedger must be an object of DemoLedgerOptions ({} for the defaults)')
  // Two billing systems for one server: which one answers would be a guess (a type mistake, not a bad value).
  if (billing !== undefined && demoLedger !== undefined)
    throw new TypeError(
      'pass either billing or demoLedger, not both: demoLedger starts the demo ledger in place of billing',
    )
  if (environment === 'production' && (billing === undefined || billing instanceof DemoLedger))
    throw new DemoInProductionError()
  if (billing === undefined && demoLedger === undefined) throw new NoBillingError()
}

async function defaultLogger(): Promise<Logger> {
  const { pino } = await import('pino')
  // Asynchronous: lines written while a write is in flight go out together (one syscall, not one per call), and
  // pino flushes what is left on exit. A SIGKILL can lose the last lines; outcomes live in the store, not the log.
  return pino({ level: 'info', base: { service: 'tollgate-provider' } }, pino.destination({ dest: 2, sync: false }))
}

/**
 * Starts a merchant-provider/v1 server: MCP at `path`, REST at /v1/… on the same port, GET /livez and /readyz on it
 * (unauthenticated; /readyz probes the store). Throws TypeError/RangeError on bad options, before listening. It
 * listens before opening the store: a store that cannot be reached yet is waited for (logged once; /livez 200,
 * /readyz 503 and every other request `503 unavailable` meanwhile), and the promise resolves once it has opened.
 */
export async function startProvider(options: ProviderOptions): Promise<RunningProvider> {
  const secrets = options.secrets.filter((s) => s !== '')
  if (secrets.length === 0) throw new NoSecretError()
  const environment = options.environment ?? secretEnvironment(secrets[0] as string)
  if (environment === undefined)
    throw new RangeError('a signing secret starts with srmps_ (sandbox) or srmp_ (production)')
  const verifier = new SignatureVerifier({ environment, secrets })
  checkBillingChoice(options, environment)
  const retentionDays = options.retentionDays ?? 30
  if (!Number.isInteger(retentionDays) || retentionDays < 30)
    throw new RangeError('retentionDays must be a whole number ≥ 30')
  const path = options.path ?? '/mcp'
  if (!path.startsWith('/')) throw new RangeError("path must start with '/'")
  const { adminPort } = options
  if (adminPort !== undefined && (!Number.isInteger(adminPort) || adminPort < 0 || adminPort > 65535))
    throw new RangeError('adminPort must be a whole number from 0 to 65535')
  // Metrics exist only with the admin listener that serves them: without it, no call pays for them.
  const metrics =
    adminPort === undefined ? undefined : new ProviderMetrics({ tools: toolTable().map((t) => t.tool.name) })
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
  const checkedPort = options.billing === undefined ? undefined : await checkBillingPort(options.billing)
  // The public server listens before the store opens, answering the health paths from the start; `serve` and the
  // store's readiness check are replaced once every call is wired (store open, demo ledger seeded, port checked).
  const health = new Health({
    checks: { store: () => Promise.reject(new Error('the provider is starting')) },
    onChange: ({ ready, failing }) => {
      if (ready) logger?.info('ready')
      // The check's error class and code only: a driver's message can quote a value.
      else
        logger?.warn(
          { failing: failing.map((f) => ({ check: f.name, ...errorFacts(f.error) })) },
          'not ready: /readyz answers 503',
        )
    },
  })
  let serve: (req: IncomingMessage, res: ServerResponse) => void = answerStarting
  const server: Server = createLimitedServer(
    (req, res) => {
      // Before Host, signatures and tokens: a balancer probes with its own Host and no credentials.
      if (isHealthPath(req.url) && health.handle(req, res)) return
      serve(req, res)
    },
    // 65 s keep-alive: longer than the usual load balancer idle timeout (60 s), so the balancer closes first.
    { keepAliveTimeoutMs: 65_000, ...options.connections },
    options.tls,
  )
  const graceful = new GracefulServer(server, {
    ...(options.shutdownDeadlineMs !== undefined && { deadlineMs: options.shutdownDeadlineMs }),
    ...(options.shutdownDelayMs !== undefined && { delayMs: options.shutdownDelayMs }),
    health,
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve())
  })
  let admin: RunningAdminServer | undefined
  let openedStore: Store
  const stopListening = async () => {
    await admin?.close()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  try {
    if (metrics !== undefined && adminPort !== undefined) {
      admin = await startAdminServer({
        port: adminPort,
        ...(options.adminHost !== undefined && { host: options.adminHost }),
        registry: metrics.registry,
        health,
        onError: (e) => logger?.warn({ err_name: e instanceof Error ? e.name : 'unknown' }, 'metrics scrape failed'),
      })
      logger?.info({ host: admin.host, port: admin.port, paths: ['/metrics', '/livez', '/readyz'] }, 'admin listening')
    }
    openedStore = await openStoreWhenReachable(options.store, options.signal, (error) => {
      logger?.warn(
        { store_error: error.outage },
        'the store cannot be reached: waiting for it (retrying with backoff; /readyz answers 503 meanwhile)',
      )
      options.onWaitingForStore?.(error)
    })
  } catch (error) {
    await stopListening()
    throw error
  }
  try {
    let billing = options.billing
    if (billing === undefined) {
      const ledger = new DemoLedger(demoLedgerStore(openedStore), { now, ...options.demoLedger })
      await ledger.seed()
      billing = ledger
    }
    // describe() valid and the port complete for what it declares, before any call is served.
    const described = checkedPort ?? (await checkBillingPort(billing))
    const tools = listedTools(described.capabilities)
    // Sandbox answers name the schema paths of an invalid port object; production answers keep them in the log.
    const namesFaultPaths = environment === 'sandbox'
    const rules = new ProviderRules({
      store: metrics?.timedStore(openedStore) ?? openedStore,
      billing: metrics?.timedBilling(billing) ?? billing,
      now,
      ...(options.inProgressLeaseMs !== undefined && { inProgressLeaseMs: options.inProgressLeaseMs }),
      ...(metrics !== undefined && { onReplay: (operation, result) => metrics.replayed(operation, result) }),
    })
    const mcp = createMcpHandler(({ era }) => createServer({ rules, tools, logger, era, metrics, namesFaultPaths }), {
      legacy: 'reject',
      responseMode: options.responseMode ?? 'auto',
      onerror: (e) => logger?.debug({ err_name: e.name }, 'mcp protocol error'),
    })
    const sessionStore =
      options.sessionStore ??
      (options.store?.kind === 'postgres'
        ? await PgSessionStore.open({
            connectionString: options.store.connectionString,
            ...(options.store.schema !== undefined && { schema: options.store.schema }),
          })
        : undefined)
    const legacy = new LegacySessions({
      createServer: () => createServer({ rules, tools, logger, era: 'legacy', metrics, namesFaultPaths }),
      jsonResponses: (options.legacyResponseMode ?? 'json') === 'json',
      now,
      // The 2025-era fast path answers JSON too; SSE sessions stay with the SDK.
      ...(options.modernFastPath !== false &&
        options.legacyResponseMode !== 'sse' && {
          fastPath: createLegacyFastPath({ rules, tools, logger, era: 'legacy', metrics, namesFaultPaths }),
        }),
      ...(sessionStore !== undefined && { store: sessionStore }),
      ...(options.sessionKey !== undefined && { sessionKey: options.sessionKey }),
      ...(options.sessionIdleTtlMs !== undefined && { idleMs: options.sessionIdleTtlMs }),
      ...(options.maxSessions !== undefined && { maxSessions: options.maxSessions }),
      onError: (e) => logger?.debug({ err_name: e instanceof Error ? e.name : 'unknown' }, 'legacy session error'),
    })
    const bodyReader = new BodyReader({
      maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
      ...(options.bodyTimeoutMs !== undefined && { bodyTimeoutMs: options.bodyTimeoutMs }),
      ...(options.maxUnfinishedBodies !== undefined && { maxUnfinishedBodies: options.maxUnfinishedBodies }),
    })
    const listenHost = options.host ?? '127.0.0.1'
    const endpoint = createMcpEndpoint({
      path,
      allowList:
        options.allowedHosts === false
          ? false
          : defaultAllowList([
              ...(options.publicHost !== undefined ? [options.publicHost] : []),
              ...(listenHost !== '0.0.0.0' && listenHost !== '::' ? [listenHost] : []),
              ...(options.allowedHosts ?? []),
            ]),
      body: bodyReader,
      // Money is integer minor units: a number written 2000.0 or 2e3 is refused with the rest of the strict rules.
      json: { maxDepth: 64, integersOnly: true },
      admitHeaders: admission.admitHeaders,
      admitBody: admission.admitBody,
      modern: toNodeHandler(mcp),
      // The fast path answers JSON, as the SDK does in 'auto' and 'json' modes; 'sse' stays with the SDK.
      ...(options.modernFastPath !== false &&
        options.responseMode !== 'sse' && {
          fastPath: createModernFastPath({ rules, tools, logger, era: 'modern', metrics, namesFaultPaths }),
        }),
      legacy,
      refusalBody: providerEnvelope,
      onEvent: (event) => {
        if (metrics !== undefined) countRefusal(metrics, event)
        if (event.kind === 'refused-admission')
          // reason is for metrics only; the caller gets the same fixed body whatever failed.
          logger?.warn({ reason: event.reason, stage: event.stage }, 'request rejected: credentials')
        else if (event.kind !== 'fast-path') logger?.info(event, 'request refused')
      },
    })
    // The REST binding: every path other than the MCP endpoint (so an unsigned request to any path gets 401 first),
    // reading bodies with the same reader (its unfinished-body cap counts both bindings).
    const otherPaths = createRestHandler({
      ctx: { rules, tools, logger, era: 'rest', metrics, namesFaultPaths },
      bodies: bodyReader,
      admission,
    })
    serve = (req, res) => {
      endpoint.handle(req, res, otherPaths).catch((error: unknown) => {
        logger?.error({ err_name: error instanceof Error ? error.name : 'unknown' }, 'request failed')
        if (!res.headersSent) {
          const body = '{"error":{"code":"internal_error","message":"the provider failed","retryable":true}}'
          res.writeHead(500, { 'content-type': 'application/json' }).end(body)
        } else res.destroy()
      })
    }
    health.setCheck('store', () => openedStore.probe())
    // An outage seen by a call drops readiness's cached answer and any round already running (its probe may have
    // passed just before): /readyz reports even a switch shorter than its cache.
    openedStore.onOutage?.(() => health.invalidate())
    const purge = startPurgeJob({ store: openedStore, retentionDays, now, logger })
    const address = server.address() as AddressInfo
    const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address
    const scheme = options.tls === undefined ? 'http' : 'https'
    if (metrics !== undefined) {
      const idleMs = options.sessionIdleTtlMs ?? 300_000
      metrics.watch({
        inProgress: () => rules.inProgress,
        pending: cachedFor(15_000, () => openedStore.countPending?.()),
        openSessions: () => legacy.store.countOpen?.(now(), idleMs) ?? Promise.resolve(undefined),
      })
    }
    logger?.info(
      {
        host: address.address,
        port: address.port,
        path,
        rest: '/v1/',
        environment,
        tls: options.tls !== undefined,
        tools: tools.map((t) => t.tool.name),
      },
      'provider listening',
    )
    let stopping: Promise<ShutdownReport> | undefined
    const stop = (how: { deadlineMs?: number; delayMs?: number }) => {
      stopping ??= graceful.close(how).then(async (report) => {
        await admin?.close()
        await purge.stop()
        await legacy.close()
        await mcp.close().catch(() => {})
        await openedStore.close()
        return report
      })
      return stopping
    }
    return {
      url: `${scheme}://${hostForUrl}:${address.port}${path}`,
      baseUrl: `${scheme}://${hostForUrl}:${address.port}`,
      restUrl: `${scheme}://${hostForUrl}:${address.port}/v1/`,
      port: address.port,
      store: openedStore,
      billing,
      rules,
      health,
      ...(admin !== undefined && { adminUrl: admin.url }),
      ...(metrics !== undefined && { metrics }),
      diagnostics: {
        get fastPathAnswered() {
          return endpoint.fastPathAnswered
        },
        get legacyFastPathAnswered() {
          return legacy.fastPathAnswered
        },
      },
      shutdown: (how = {}) => stop(how),
      close: () => stop({ deadlineMs: 0, delayMs: 0 }).then(() => {}),
      setTls: (credentials) => {
        try {
          replaceTlsCredentials(server, credentials)
        } catch (error) {
          // Which part failed (cert, key, pair), never a byte of either.
          logger?.warn(
            { ...errorFacts(error), which: (error as { which?: unknown }).which },
            'TLS pair refused: the old one is kept',
          )
          throw error
        }
        logger?.info('TLS certificate replaced: new connections get it')
      },
      setSecrets: (next) => {
        try {
          checkSecretList(next, environment)
          verifier.setSecrets(next)
        } catch (error) {
          logger?.warn(errorFacts(error), 'signing secrets refused: the old ones are kept')
          throw error
        }
        logger?.info({ secrets: next.length }, 'signing secrets replaced')
      },
    }
  } catch (error) {
    await stopListening()
    await openedStore.close().catch(() => {})
    throw error
  }
}

/** An error's class and code, for a log line (never its message, which can quote a value). */
function errorFacts(error: unknown): { type: string; code?: string } {
  const type = error instanceof Error ? error.constructor.name : typeof error
  const outage = error instanceof StoreError ? error.outage : undefined
  const code = outage?.code ?? (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? { type, code } : { type }
}

/** Counts a refusal made at the MCP door (Host/Origin before routing, so for both bindings). */
function countRefusal(metrics: ProviderMetrics, event: EndpointEvent): void {
  if (event.kind === 'refused-host') metrics.refused('none', event.status === 421 ? 'host' : 'origin')
  else if (event.kind === 'refused-admission')
    metrics.refused('mcp', event.stage === 'headers' ? 'credentials' : 'signature')
  else if (event.kind === 'refused-body') metrics.refused('mcp', bodyRefusalReason(event.code))
  else if (event.kind === 'refused-json') metrics.refused('mcp', 'not_json')
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

/** The provider's error envelope, for refusals made before any MCP exchange (404, 408, 413, 503). */
function providerEnvelope(status: number, code: string, message: string): string {
  const envelopeCode = status === 404 ? 'not_found' : status === 503 ? 'unavailable' : 'invalid_request'
  void code
  return JSON.stringify({ error: { code: envelopeCode, message, retryable: status === 503 || status === 408 } })
}
