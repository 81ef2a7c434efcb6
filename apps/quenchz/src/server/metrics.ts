// quenchz's Prometheus metrics: one registry per server, fed by the gate's events (calls, refusals, faults), the live
// source's upstream observer, and gauges read at scrape time (the scheduler's queue, open 2025-era sessions). Every
// label value comes from a set fixed when the server starts — tool names from the server's own table, outcome words,
// error codes, configured callers — so no caller can add a series; a caller outside the configured set is `other`.
import type { CallScheduler, GateEvent, KeySetFetchOutcome } from '@tollgate/gate'
import type { SessionStore } from '@tollgate/mcp-endpoint'
import {
  BoundChildren,
  type CounterChild,
  createMetricsRegistry,
  FastCounter,
  FastHistogram,
  type HistogramChild,
  KnownLabel,
  OTHER_LABEL,
  REQUEST_SECONDS_BUCKETS,
  STORE_SECONDS_BUCKETS,
} from '@tollgate/operability'
import { Counter, Gauge, type Registry } from 'prom-client'
import type { UpstreamObserver } from '../rates/index.js'
import {
  BUDGET_REFUSALS,
  CALL_OUTCOMES,
  CHARGED_FROM,
  FAULT_CODES,
  JWKS_RESULTS,
  jwksResult,
  NO_TOOL,
  TOKEN_REFUSALS,
  UPSTREAM_RESULTS,
} from './metric-labels.js'

export { CALL_OUTCOMES, JWKS_RESULTS, jwksResult, NO_TOOL } from './metric-labels.js'

export interface QuenchzMetricsOptions {
  /**
   * Callers that get a label of their own in the budget metrics: a set fixed by configuration (the seed's two
   * callers, or per-caller overrides). Every other caller is counted as `other`; default none (all `other`).
   */
  namedCallers?: readonly string[]
  /** Also export the Node process's own metrics (CPU, memory, event loop, GC) as `quenchz_process_…`; default true. */
  processMetrics?: boolean
  /** Labels on every series (e.g. `{ replica: 'a' }`). */
  labels?: Record<string, string>
  /** With a real issuer's JWKS (--jwks-url): count its fetches (`keySet`); default false, no such series. */
  jwks?: boolean
}

/** What a running quenchz tells its metrics: its tools, and what to read at scrape time. */
export interface QuenchzGauges {
  /** The tool names this server serves (the only `tool` label values besides `none`). */
  tools: readonly string[]
  /** The fair scheduler (its `inService` and `waiting` counts), when there is one. */
  scheduler?: CallScheduler
  /** Where 2025-era sessions are recorded, and their idle timeout (a session unseen that long is not open). */
  sessions?: { store: SessionStore; idleMs: number }
  /** HTTP requests received on the main port and not yet answered in full. */
  requestsInFlight?: () => number
  /** Readiness as /readyz answers it (cached by the health model, so a scrape does not load the store). */
  health?: { ready(): Promise<boolean> }
}

/** quenchz's metrics: feed it the gate's events and the source's upstream requests; scrape `registry`. */
export interface QuenchzMetrics {
  readonly registry: Registry
  /** Counts one gate event (give it every event the gate emits; it is cheap: bound children, no allocation). */
  onEvent(event: GateEvent): void
  /** The live source's observer: upstream requests by result and duration, cache hits. */
  readonly upstream: UpstreamObserver
  /** The server's tools, and what to read at every scrape (queue depth, open sessions). Call once, when the server is built. */
  watch(gauges: QuenchzGauges): void
  /** The key set's fetch observer (RemoteKeySet `onFetch`); counts only when created with `jwks: true`. */
  readonly keySet: (outcome: KeySetFetchOutcome) => void
}

type Registers = [Registry]

/** The series counted from the gate's events and the live source, in the order the exposition lists them. */
function eventMetrics(registers: Registers) {
  const calls = new FastCounter({
    name: 'quenchz_tool_calls_total',
    help: `Finished tools/call requests by tool (none: not granted or unknown) and outcome (${CALL_OUTCOMES.join(', ')}, else other).`,
    labelNames: ['tool', 'outcome'],
    registers,
  })
  const callSeconds = new FastHistogram({
    name: 'quenchz_tool_call_duration_seconds',
    help: 'Time from a tools/call starting its turn to its answer being ready (budget charge, tool, validation), by tool.',
    labelNames: ['tool'],
    buckets: REQUEST_SECONDS_BUCKETS,
    registers,
  })
  const charged = new FastCounter({
    name: 'quenchz_budget_charged_total',
    help: "Budget units charged, by caller (configured callers by name, every other caller as other) and where the unit came from (reserve: the caller's own; spare or bucket: shared).",
    labelNames: ['caller', 'from'],
    registers,
  })
  const refused = new FastCounter({
    name: 'quenchz_budget_refused_total',
    help: "Calls the budget refused, by caller (configured callers by name, others as other) and reason (spent: the caller's reserve and the shared pool are empty; unknown-caller: no reserve is held for this caller).",
    labelNames: ['caller', 'reason'],
    registers,
  })
  const queueFull = new Counter({
    name: 'quenchz_queue_full_total',
    help: "Tool calls answered 429 with Retry-After because their caller's queue was full (nothing charged or run).",
    registers,
  })
  const tokenRefusals = new Counter({
    name: 'quenchz_token_refusals_total',
    help: 'Requests refused 401 for their bearer token, by the gate error code.',
    labelNames: ['reason'],
    registers,
  })
  const hostRefusals = new Counter({
    name: 'quenchz_host_refusals_total',
    help: 'Requests refused by the Host/Origin allow-list (421: Host, 403: Origin).',
    labelNames: ['status'],
    registers,
  })
  const faults = new Counter({
    name: 'quenchz_faults_total',
    help: 'Server-side faults by code (budget-store: the budget store could not be reached; each is also logged).',
    labelNames: ['code'],
    registers,
  })
  const upstreamRequests = new FastCounter({
    name: 'quenchz_upstream_requests_total',
    help: 'Requests sent to the ECB API (live source), by result: HTTP status class, timeout, unreachable or too-large.',
    labelNames: ['result'],
    registers,
  })
  const upstreamSeconds = new FastHistogram({
    name: 'quenchz_upstream_request_duration_seconds',
    help: 'Time of one request to the ECB API (live source), headers and body.',
    labelNames: [],
    buckets: STORE_SECONDS_BUCKETS,
    registers,
  })
  const cacheHits = new FastCounter({
    name: 'quenchz_upstream_cache_hits_total',
    help: 'Rate windows answered from the live source’s SQLite cache without asking the ECB API.',
    labelNames: [],
    registers,
  })
  return {
    calls,
    callSeconds,
    charged,
    refused,
    queueFull,
    tokenRefusals,
    hostRefusals,
    faults,
    upstreamRequests,
    upstreamSeconds,
    cacheHits,
  }
}

/** Gauges read at scrape time from what a running server exposes (its scheduler, requests, readiness, sessions). */
function watchGauges(registers: Registers, gauges: QuenchzGauges): void {
  const scheduler = gauges.scheduler as { inService?: number; waiting?: number } | undefined
  new Gauge({
    name: 'quenchz_calls_in_service',
    help: 'Tool calls being served now (the fair scheduler’s slots in use).',
    registers,
    collect() {
      this.set(scheduler?.inService ?? 0)
    },
  })
  new Gauge({
    name: 'quenchz_calls_waiting',
    help: 'Tool calls waiting for their caller’s turn (the queue depth, all callers).',
    registers,
    collect() {
      this.set(scheduler?.waiting ?? 0)
    },
  })
  const inFlight = gauges.requestsInFlight
  if (inFlight !== undefined)
    new Gauge({
      name: 'quenchz_http_requests_in_flight',
      help: 'HTTP requests received on the main port and not yet answered in full (during a shutdown: what is left to drain).',
      registers,
      collect() {
        this.set(inFlight())
      },
    })
  const health = gauges.health
  if (health !== undefined)
    new Gauge({
      name: 'quenchz_ready',
      help: '1 when /readyz answers 200 (the budget store answers and the server is not draining), else 0.',
      registers,
      async collect() {
        this.set((await health.ready()) ? 1 : 0)
      },
    })
  const sessions = gauges.sessions
  if (sessions?.store.countOpen !== undefined) {
    const count = sessions.store.countOpen.bind(sessions.store)
    new Gauge({
      name: 'quenchz_sessions_open',
      help: 'Open 2025-era MCP sessions, as the session store counts them (with Redis: the whole deployment’s, the same on every replica).',
      registers,
      async collect() {
        try {
          this.set(await count(Date.now(), sessions.idleMs))
        } catch {
          // The store cannot be read (Redis down): NaN rather than a stale count; /readyz says why.
          this.set(Number.NaN)
        }
      },
    })
  }
}

/** The JWKS fetch series (only with --jwks-url), and the observer that feeds them. */
function keySetMetrics(registers: Registers): (outcome: KeySetFetchOutcome) => void {
  const fetches = new Counter({
    name: 'quenchz_jwks_fetches_total',
    help: `Fetches of the issuer's JWKS (--jwks-url) by result (${JWKS_RESULTS.join(', ')}); made when a token needs keys not held or held too long.`,
    labelNames: ['result'],
    registers,
  })
  for (const r of JWKS_RESULTS) fetches.labels(r).inc(0)
  const lastSuccess = new Gauge({
    name: 'quenchz_jwks_last_success_timestamp_seconds',
    help: 'When the last successful JWKS fetch finished, Unix seconds; 0 before the first.',
    registers,
  })
  lastSuccess.set(0)
  const keys = new Gauge({
    name: 'quenchz_jwks_keys',
    help: 'Keys in the JWKS the last successful fetch read.',
    registers,
  })
  return (outcome) => {
    fetches.labels(jwksResult(outcome)).inc()
    if (outcome.ok) {
      lastSuccess.set(Date.now() / 1000)
      keys.set(outcome.keys)
    }
  }
}

export function createQuenchzMetrics(options: QuenchzMetricsOptions = {}): QuenchzMetrics {
  const registry = createMetricsRegistry({
    defaultMetrics: options.processMetrics ?? true,
    defaultMetricsPrefix: 'quenchz_',
    ...(options.labels !== undefined && { labels: options.labels }),
  })
  const registers: Registers = [registry]
  // Set by watch(), when the server's tool table is known (no call is counted before that).
  let tool = new KnownLabel([])
  const outcome = new KnownLabel(CALL_OUTCOMES)
  const caller = new KnownLabel(options.namedCallers ?? [])
  const from = new KnownLabel(CHARGED_FROM)
  const tokenReason = new KnownLabel(TOKEN_REFUSALS)
  const faultCode = new KnownLabel(FAULT_CODES)
  const m = eventMetrics(registers)

  // Every child bound once: the hot path is a few Map lookups and an add.
  const callChildren = new BoundChildren<CounterChild>(2, (t, o) => m.calls.child(t, o))
  const secondsChildren = new BoundChildren<HistogramChild>(1, (t) => m.callSeconds.child(t))
  const chargedChildren = new BoundChildren<CounterChild>(2, (c, f) => m.charged.child(c, f))
  const refusedChildren = new BoundChildren<CounterChild>(2, (c, r) => m.refused.child(c, r))
  const upstreamChildren = new BoundChildren<CounterChild>(1, (r) => m.upstreamRequests.child(r))
  const upstreamDuration = m.upstreamSeconds.child()
  const cacheHit = m.cacheHits.child()
  // Series that exist before anything happens, so rate() and alerts see 0 rather than nothing.
  for (const r of UPSTREAM_RESULTS) upstreamChildren.get(r)
  for (const c of [...caller.values, OTHER_LABEL]) for (const r of BUDGET_REFUSALS.values()) refusedChildren.get(c, r)
  m.queueFull.inc(0)
  m.faults.labels('budget-store').inc(0)

  const onEvent = (event: GateEvent): void => {
    switch (event.kind) {
      case 'call': {
        const t = event.tool === undefined ? NO_TOOL : tool.of(event.tool)
        const o = outcome.of(event.outcome)
        callChildren.get(t, o).inc()
        secondsChildren.get(t).observe(event.durationMs / 1000)
        if (event.charged !== undefined) chargedChildren.get(caller.of(event.caller), from.of(event.charged)).inc()
        else {
          const reason = BUDGET_REFUSALS.get(event.outcome)
          if (reason !== undefined) refusedChildren.get(caller.of(event.caller), reason).inc()
        }
        return
      }
      case 'refused-queue-full':
        m.queueFull.inc()
        return
      case 'refused-token':
        m.tokenRefusals.labels(tokenReason.of(event.code)).inc()
        return
      case 'refused-host':
        m.hostRefusals.labels(String(event.status)).inc()
        return
      case 'fault':
        m.faults.labels(faultCode.of(event.code)).inc()
        return
    }
  }

  const upstream: UpstreamObserver = {
    fetched(result, seconds) {
      upstreamChildren.get(result).inc()
      upstreamDuration.observe(seconds)
    },
    cacheHit() {
      cacheHit.inc()
    },
  }

  let watched = false
  const watch = (gauges: QuenchzGauges): void => {
    if (watched) throw new Error('the metrics already watch a server')
    watched = true
    tool = new KnownLabel(gauges.tools)
    for (const t of [...tool.values, NO_TOOL]) for (const o of CALL_OUTCOMES) callChildren.get(t, o)
    watchGauges(registers, gauges)
  }
  const keySet = options.jwks === true ? keySetMetrics(registers) : () => {}
  return { registry, onEvent, upstream, watch, keySet }
}
