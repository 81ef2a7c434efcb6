import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  type Audience,
  allowListFor,
  type Budget,
  type BudgetStore,
  type CallScheduler,
  type Clock,
  createGate,
  FairBudget,
  type Gate,
  type GatedTool,
  type GateEvent,
  type GateOptions,
  type HostAllowList,
  monotonicClock,
} from '@tollgate/gate'
import {
  checkTlsCredentials,
  createLimitedServer,
  MemorySessionStore,
  replaceTlsCredentials,
  type TlsCredentials,
} from '@tollgate/mcp-endpoint'
import { GracefulServer, type Health, type ShutdownReport } from '@tollgate/operability'
import { SERVER_INSTRUCTIONS } from '../rates/index.js'
import { BUDGET, CALLERS, SERVER_INFO } from './constants.js'
import type { QuenchzMetrics } from './metrics.js'

/** A 2025-era session unseen this long is closed (and no longer counted open). */
export const SESSION_IDLE_MS = 15 * 60_000
/** How long a graceful shutdown lets requests already received finish. */
export const DEFAULT_SHUTDOWN_DEADLINE_MS = 10_000

/** Options of {@link startQuenchz}. */
export interface QuenchzServerOptions {
  /** The tools to serve (the rates core's `createRatesTools`, or test tools). */
  tools: readonly GatedTool[]
  audience: Audience
  /** Bind address; default `127.0.0.1`. */
  host?: string
  /** Port; 0 picks a free one. */
  port: number
  /** Default: the digest's fair budget (60, 60/s, f 0.5, agent-alpha and agent-beta) on `budgetClock`. */
  budget?: Budget
  /** Clock of the default budget; default monotonic. The interop CLI passes a frozen one. */
  budgetClock?: Clock
  /** Default `[host, host:*]` and their http origins. */
  allowList?: HostAllowList
  /** Orders tool calls by caller so a greedy caller cannot slow a quiet one; default none. */
  scheduler?: CallScheduler
  onEvent?: (event: GateEvent) => void
  /** Where 2025-era sessions are recorded (Redis for several replicas); default memory. */
  sessionStore?: GateOptions['sessionStore']
  /** MAC key of 2025-era session ids (≥ 32 characters), the same on every replica; default random per process. */
  sessionKey?: string
  /** The gate's fast path for plain tool calls; default on (false: every request through the SDK, for comparison). */
  fastCalls?: boolean
  /** Cap of the gate's kept bytes of settled answers; default the gate's (32 MiB). */
  settledAnswerBytes?: number
  /** Scopes named in the metadata's `scopes_supported` and the 401 challenge's `scope`; default none (the seed's). */
  advertisedScopes?: readonly string[]
  /**
   * Answers GET /livez and /readyz on this port before anything else (Host guard and token included: a load
   * balancer probes with its own Host and no token); `shutdown` sets it draining. Default: no health paths (404).
   */
  health?: Health
  /** Counts the gate's events and reads the scheduler and open sessions at scrape time; serve its registry elsewhere. */
  metrics?: QuenchzMetrics
  /** How long `shutdown` lets requests already received finish; default 10 000 ms. */
  shutdownDeadlineMs?: number
  /**
   * Serve HTTPS with this certificate (PEM; a chain allowed) and key, checked before listening (a pair that cannot
   * serve throws TlsCredentialsError, ERR_MCP_ENDPOINT_TLS); default plain HTTP. Replace it later with `setTls`.
   */
  tls?: TlsCredentials
}

/** A listening quenchz server. */
export interface RunningQuenchz {
  /** `http://<host>:<port>/mcp`, or `https://…` when started with `tls`. */
  url: string
  host: string
  port: number
  gate: Gate
  /** The listening node:http server (for measurement: its `request` events). */
  server: Server
  /**
   * Graceful: /readyz 503 at once, go on serving as usual for `delayMs` (default 0: the time a balancer takes to see
   * it), then stop accepting, answer every request already received (later requests on open connections get
   * `Connection: close`), destroy what is left at the deadline, then close the gate. Idempotent.
   */
  shutdown(options?: { deadlineMs?: number; delayMs?: number }): Promise<ShutdownReport>
  /** At once: open connections are cut. */
  close(): Promise<void>
  /**
   * Replaces the certificate and key (started with `tls` only): new handshakes get the new pair at once, connections
   * already open keep theirs and are not dropped. A pair that cannot serve, or a server started without TLS, throws
   * TlsCredentialsError (ERR_MCP_ENDPOINT_TLS, naming cert, key or pair) and the old pair stays.
   */
  setTls(credentials: TlsCredentials): void
}

/** The digest's fair budget; in memory unless a shared `store` (Redis, for several replicas) is given. */
export function quenchzBudget(clock: Clock = monotonicClock, store?: BudgetStore): FairBudget {
  return new FairBudget({ ...BUDGET, callers: [CALLERS.greedy, CALLERS.quiet], clock, ...(store ? { store } : {}) })
}

/** Builds the gate for quenchz: the digest's identity and instructions, the given tools and audience. */
export function quenchzGate(options: Omit<QuenchzServerOptions, 'port'>): Gate {
  const host = options.host ?? '127.0.0.1'
  return createGate({
    serverInfo: { ...SERVER_INFO },
    instructions: SERVER_INSTRUCTIONS,
    tools: options.tools,
    audience: options.audience,
    budget: options.budget ?? quenchzBudget(options.budgetClock),
    allowList: options.allowList ?? allowListFor(host),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    ...(options.sessionStore ? { sessionStore: options.sessionStore } : {}),
    sessionIdleMs: SESSION_IDLE_MS,
    ...(options.sessionKey !== undefined ? { sessionKey: options.sessionKey } : {}),
    ...(options.fastCalls !== undefined ? { fastCalls: options.fastCalls } : {}),
    ...(options.settledAnswerBytes !== undefined ? { settledAnswerBytes: options.settledAnswerBytes } : {}),
    ...(options.advertisedScopes !== undefined ? { advertisedScopes: options.advertisedScopes } : {}),
  })
}

/** Starts quenchz on node:http: Streamable HTTP on `/mcp` for 2026-07-28 and 2025-era clients, behind the gate. */
export async function startQuenchz(options: QuenchzServerOptions): Promise<RunningQuenchz> {
  const host = options.host ?? '127.0.0.1'
  const { health, metrics } = options
  // Checked before anything is opened, so a pair that cannot serve leaves nothing behind.
  if (options.tls !== undefined) checkTlsCredentials(options.tls)
  // A store of our own when none is given, so the metrics can count its open sessions.
  const sessionStore = options.sessionStore ?? new MemorySessionStore()
  const onEvent =
    metrics === undefined
      ? options.onEvent
      : (event: GateEvent) => {
          metrics.onEvent(event)
          options.onEvent?.(event)
        }
  const gate = quenchzGate({ ...options, sessionStore, ...(onEvent !== undefined && { onEvent }) })
  // The endpoint's connection limits: 10 s for headers, 30 s for a whole request (slow-loris), capped connections.
  const server: Server = createLimitedServer(
    (req, res) => {
      if (health?.handle(req, res) === true) return
      gate.handle(req, res).catch((error: unknown) => {
        onEvent?.({ kind: 'fault', code: 'unhandled', error })
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
        res.end()
      })
    },
    {},
    options.tls,
  )
  const graceful = new GracefulServer(server, {
    deadlineMs: options.shutdownDeadlineMs ?? DEFAULT_SHUTDOWN_DEADLINE_MS,
    ...(health !== undefined && { health }),
  })
  metrics?.watch({
    tools: options.tools.map((t) => t.name),
    ...(options.scheduler !== undefined && { scheduler: options.scheduler }),
    sessions: { store: sessionStore, idleMs: SESSION_IDLE_MS },
    requestsInFlight: () => graceful.inFlight,
    ...(health !== undefined && { health }),
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  const shownHost = host.includes(':') ? `[${host}]` : host
  let shuttingDown: Promise<ShutdownReport> | undefined
  return {
    url: `${options.tls === undefined ? 'http' : 'https'}://${shownHost}:${port}/mcp`,
    host,
    port,
    gate,
    server,
    shutdown(shutdownOptions = {}) {
      shuttingDown ??= graceful.close(shutdownOptions).then(async (report) => {
        await gate.close()
        return report
      })
      return shuttingDown
    },
    async close() {
      if (shuttingDown !== undefined) {
        await shuttingDown
        return
      }
      await gate.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
    setTls(credentials) {
      replaceTlsCredentials(server, credentials)
    },
  }
}
