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
import { createLimitedServer } from '@tollgate/mcp-endpoint'
import { SERVER_INSTRUCTIONS } from '../rates/index.js'
import { BUDGET, CALLERS, SERVER_INFO } from './constants.js'

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
  advertisedScopes?: readonly string[]
}

/** A listening quenchz server. */
export interface RunningQuenchz {
  /** `http://<host>:<port>/mcp` */
  url: string
  host: string
  port: number
  gate: Gate
  /** The listening node:http server (for measurement: its `request` events). */
  server: Server
  close(): Promise<void>
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
    ...(options.sessionKey !== undefined ? { sessionKey: options.sessionKey } : {}),
    ...(options.fastCalls !== undefined ? { fastCalls: options.fastCalls } : {}),
    ...(options.settledAnswerBytes !== undefined ? { settledAnswerBytes: options.settledAnswerBytes } : {}),
    ...(options.advertisedScopes !== undefined ? { advertisedScopes: options.advertisedScopes } : {}),
  })
}

/** Starts quenchz on node:http: Streamable HTTP on `/mcp` for 2026-07-28 and 2025-era clients, behind the gate. */
export async function startQuenchz(options: QuenchzServerOptions): Promise<RunningQuenchz> {
  const host = options.host ?? '127.0.0.1'
  const gate = quenchzGate(options)
  // The endpoint's connection limits: 10 s for headers, 30 s for a whole request (slow-loris), capped connections.
  const server: Server = createLimitedServer((req, res) => {
    gate.handle(req, res).catch((error: unknown) => {
      options.onEvent?.({ kind: 'fault', code: 'unhandled', error })
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
      res.end()
    })
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
  return {
    url: `http://${shownHost}:${port}/mcp`,
    host,
    port,
    gate,
    server,
    async close() {
      await gate.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
