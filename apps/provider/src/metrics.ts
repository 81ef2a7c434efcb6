// The provider's Prometheus metrics. Every label value comes from a set fixed when the server starts (the profile's
// tools, the contract's codes, the store's and billing port's method names, the refusal reasons below): never a key,
// a ref, a token or any caller input. The per-call instruments are bound once per (era, tool) and per outcome, and
// are plain numbers (FastCounter/FastHistogram): a call adds to a few numbers and allocates nothing. Gauges are read
// when Prometheus scrapes.
import { ERROR_CODES, MERCHANT_REFUSAL_PATTERN, REFUSAL_CODES } from '@tollgate/contract'
import {
  type CounterChild,
  createMetricsRegistry,
  FastCounter,
  FastHistogram,
  type HistogramChild,
  OTHER_LABEL,
  REQUEST_SECONDS_BUCKETS,
  STORE_SECONDS_BUCKETS,
} from '@tollgate/operability'
import { Gauge, type Registry } from 'prom-client'
import type { BillingPort } from './billing/port.js'
import type { ToolAnswer } from './rules/answers.js'
import type { SameTransactionCommit } from './rules/same-transaction.js'
import type { Store } from './store/store.js'

/** How a call reached the rules: the MCP era, or the REST binding. */
export type CallEra = 'modern' | 'legacy' | 'rest'

const ERA_LABEL: Record<CallEra, string> = { modern: '2026-07-28', legacy: '2025', rest: 'rest' }
const BINDING_LABEL: Record<CallEra, string> = { modern: 'mcp', legacy: 'mcp', rest: 'rest' }

/**
 * Why a request was refused before any tool ran, as a label: the status it got is fixed by the reason.
 * body_too_large 413, body_timeout 408, body_aborted 400, busy 503 (too many bodies being received), host 421,
 * origin 403, credentials 401 (bearer token / edge headers), signature 401, not_json / bad_request 400 (strict JSON,
 * REST request shape), no_route 404, method_not_allowed 405.
 */
export const REFUSAL_REASONS = [
  'body_too_large',
  'body_timeout',
  'body_aborted',
  'busy',
  'host',
  'origin',
  'credentials',
  'signature',
  'not_json',
  'bad_request',
  'no_route',
  'method_not_allowed',
] as const
export type RefusalReason = (typeof REFUSAL_REASONS)[number]

/** The refusal reason of a body read's refusal code (mcp-endpoint's BodyRefusal codes). */
export function bodyRefusalReason(code: string): RefusalReason {
  switch (code) {
    case 'ERR_MCP_ENDPOINT_TOO_LARGE':
      return 'body_too_large'
    case 'ERR_MCP_ENDPOINT_BODY_TIMEOUT':
      return 'body_timeout'
    case 'ERR_MCP_ENDPOINT_BUSY':
      return 'busy'
    default:
      return 'body_aborted'
  }
}

/** What an idempotent call with a key already seen came to. */
export type ReplayResult = 'replayed' | 'conflict' | 'in_progress'

const KNOWN_ERRORS = new Set([...ERROR_CODES, ...REFUSAL_CODES])
const KEYED_TOOLS = new Set(['sr_refund', 'sr_cancel_subscription'])

/**
 * The outcome label of an answer: `ok`, `pending` (a refund or cancellation answered pending), a contract error or
 * refusal code, `merchant_refusal` for a merchant's own x_… code, else `other`.
 */
export function outcomeLabel(tool: string, answer: ToolAnswer): string {
  if (answer.ok) return KEYED_TOOLS.has(tool) && answer.body.status === 'pending' ? 'pending' : 'ok'
  const code = answer.body.error.code
  if (KNOWN_ERRORS.has(code)) return code
  return MERCHANT_REFUSAL_PATTERN.test(code) ? 'merchant_refusal' : OTHER_LABEL
}

/** One (era, tool)'s instruments, bound once. */
class CallInstruments {
  readonly #outcomes = new Map<string, CounterChild>()
  constructor(
    readonly tool: string,
    readonly duration: HistogramChild,
    readonly counter: (outcome: string) => CounterChild,
  ) {}

  record(answer: ToolAnswer, seconds: number): void {
    this.duration.observe(seconds)
    const outcome = outcomeLabel(this.tool, answer)
    let child = this.#outcomes.get(outcome)
    if (child === undefined) {
      child = this.counter(outcome)
      this.#outcomes.set(outcome, child)
    }
    child.inc()
  }
}

export interface ProviderMetricsOptions {
  /** The registry to fill; default a new one (createMetricsRegistry). */
  registry?: Registry
  /** Also export the Node process's metrics (CPU, memory, event loop, GC) as tollgate_provider_process_…; default true. */
  processMetrics?: boolean
  /** The tool names calls can carry (the profile's tools); anything else is counted as `other`. */
  tools: readonly string[]
}

/** What the gauges read at scrape time. */
export interface MetricsSources {
  /** Keyed operations this process is running now (claimed, no outcome yet). */
  inProgress: () => number
  /** Operations recorded as pending in the store (every replica's), or undefined when the store cannot say. */
  pending?: () => Promise<number | undefined>
  /** Open 2025-era sessions in the session store, or undefined when the store cannot say. */
  openSessions?: () => Promise<number | undefined>
}

/** The provider's metrics; one per server. */
export class ProviderMetrics {
  readonly registry: Registry
  readonly #calls: Record<CallEra, Map<string, CallInstruments>>
  readonly #refusals: Record<'mcp' | 'rest' | 'none', Map<string, CounterChild>>
  readonly #replays: FastCounter
  readonly #replayChildren = new Map<string, CounterChild>()
  readonly #storeSeconds: FastHistogram
  readonly #storeErrors: FastCounter
  readonly #billingSeconds: FastHistogram
  readonly #billingErrors: FastCounter
  readonly #verified: readonly [CounterChild, CounterChild]
  #sources: MetricsSources | undefined

  constructor(options: ProviderMetricsOptions) {
    this.registry =
      options.registry ??
      createMetricsRegistry({
        defaultMetrics: options.processMetrics ?? true,
        defaultMetricsPrefix: 'tollgate_provider_',
      })
    const registers = [this.registry]
    this.#calls = callInstruments(registers, options.tools)

    this.#refusals = refusalCounters(registers)

    this.#replays = new FastCounter({
      name: 'tollgate_provider_idempotent_replays_total',
      help: 'Keyed calls whose key was already recorded, by operation (refund, cancel_subscription) and result: replayed (the recorded outcome answered again), conflict (same key, other parameters), in_progress (the first call still running).',
      labelNames: ['operation', 'result'],
      registers,
    })
    this.#storeSeconds = new FastHistogram({
      name: 'tollgate_provider_store_call_duration_seconds',
      help: "Time of the rules' calls to the idempotency store, by store (sqlite, postgres) and call.",
      labelNames: ['store', 'call'],
      buckets: STORE_SECONDS_BUCKETS,
      registers,
    })
    this.#storeErrors = new FastCounter({
      name: 'tollgate_provider_store_errors_total',
      help: "The rules' idempotency-store calls that failed (threw), by store and call.",
      labelNames: ['store', 'call'],
      registers,
    })
    this.#billingSeconds = new FastHistogram({
      name: 'tollgate_provider_billing_call_duration_seconds',
      help: "Time of the rules' calls to the billing port, by call (the demo ledger keeps its data in the same store, so there these are store calls too).",
      labelNames: ['call'],
      buckets: STORE_SECONDS_BUCKETS,
      registers,
    })
    this.#billingErrors = new FastCounter({
      name: 'tollgate_provider_billing_errors_total',
      help: "The rules' billing-port calls that failed (threw), by call.",
      labelNames: ['call'],
      registers,
    })
    const verified = new FastCounter({
      name: 'tollgate_provider_signatures_verified_total',
      help: 'Requests whose signature verified, by the position of the secret that verified it (1 or 2, the order given to the server; never the secret). While rotating, secret="1" falling to zero shows the old secret is no longer used.',
      labelNames: ['secret'],
      registers,
    })
    // Both positions exist from the start (at 0), so a rate over secret="2" is defined before the rotation begins.
    this.#verified = [verified.child('1'), verified.child('2')]

    sourceGauges(registers, () => this.#sources)
  }

  /** Where the gauges read from (set once the server's parts exist). */
  watch(sources: MetricsSources): void {
    this.#sources = sources
  }

  /** The instruments of one (era, tool): bind once, then `record(answer, seconds)` per call. */
  calls(era: CallEra, tool: string): CallInstruments {
    const byTool = this.#calls[era]
    return byTool.get(tool) ?? (byTool.get(OTHER_LABEL) as CallInstruments)
  }

  /** A request refused before any tool ran. */
  refused(binding: 'mcp' | 'rest' | 'none', reason: RefusalReason): void {
    this.#refusals[binding].get(reason)?.inc()
  }

  /** A request whose signature verified with the secret at this position. */
  signatureVerified(position: 1 | 2): void {
    this.#verified[position - 1]?.inc()
  }

  /** A keyed call whose key was already recorded. */
  replayed(operation: string, result: ReplayResult): void {
    const key = `${operation}|${result}`
    let child = this.#replayChildren.get(key)
    if (child === undefined) {
      child = this.#replays.child(operation === 'refund' ? 'refund' : 'cancel_subscription', result)
      this.#replayChildren.set(key, child)
    }
    child.inc()
  }

  /** The store with the rules' calls timed and their failures counted (purge and the demo ledger use the store itself). */
  timedStore(store: Store): Store {
    const calls = timedCalls(store, STORE_CALLS, (call) => ({
      seconds: this.#storeSeconds.child(store.kind, call),
      errors: this.#storeErrors.child(store.kind, call),
    }))
    return {
      kind: store.kind,
      ...(calls as Pick<Store, (typeof STORE_CALLS)[number]>),
      purge: (cutoffMs) => store.purge(cutoffMs),
      probe: () => store.probe(),
      close: () => store.close(),
    }
  }

  /** The billing port with the rules' calls timed and their failures counted; a method it lacks stays absent. */
  timedBilling(billing: BillingPort): BillingPort {
    const calls = timedCalls(billing, BILLING_CALLS, (call) => ({
      seconds: this.#billingSeconds.child(call),
      errors: this.#billingErrors.child(call),
    }))
    return {
      ...(billing.appliesGenericRefusals !== undefined && { appliesGenericRefusals: billing.appliesGenericRefusals }),
      ...(calls as unknown as BillingPort),
    }
  }

  /** The demo ledger's same-transaction calls, timed as the port method each stands for (refund, …). */
  timedSameTransaction(commit: SameTransactionCommit): SameTransactionCommit {
    return timedCalls(commit, Object.keys(SAME_TRANSACTION_CALLS), (call) => {
      const portCall = SAME_TRANSACTION_CALLS[call as keyof SameTransactionCommit]
      return { seconds: this.#billingSeconds.child(portCall), errors: this.#billingErrors.child(portCall) }
    }) as unknown as SameTransactionCommit
  }
}

const SAME_TRANSACTION_CALLS: Record<keyof SameTransactionCommit, (typeof BILLING_CALLS)[number]> = {
  refundFinishing: 'refund',
  cancelFinishing: 'cancelSubscription',
  refundClaiming: 'refundClaiming',
}

const STORE_CALLS = ['claim', 'finish', 'abandon', 'release', 'settle', 'get'] as const
const BILLING_CALLS = [
  'describe',
  'findCustomers',
  'getCustomer',
  'listTransactions',
  'getTransaction',
  'getSubscription',
  'assessRefund',
  'assessCancel',
  'refund',
  'refundClaiming',
  'cancelSubscription',
  'listPaymentAttempts',
  'lookup',
] as const

/**
 * The target's named asynchronous methods, each timed and its failures counted, as plain functions (called with the
 * target as `this`, so classes with private fields work). A method the target lacks is left out.
 */
function timedCalls(
  target: object,
  calls: readonly string[],
  instruments: (call: string) => { seconds: HistogramChild; errors: CounterChild },
): Record<string, (...args: unknown[]) => Promise<unknown>> {
  const out: Record<string, (...args: unknown[]) => Promise<unknown>> = {}
  for (const call of calls) {
    const method = (target as Record<string, unknown>)[call]
    if (typeof method !== 'function') continue
    const { seconds, errors } = instruments(call)
    out[call] = async (...args: unknown[]) => {
      const started = performance.now()
      try {
        return await (method as (...a: unknown[]) => Promise<unknown>).apply(target, args)
      } catch (error) {
        errors.inc()
        throw error
      } finally {
        seconds.observe((performance.now() - started) / 1000)
      }
    }
  }
  return out
}

/** Each era's instruments per tool (and the catch-all label): a call finds its counter and histogram by a Map read. */
function callInstruments(
  registers: Registry[],
  toolNames: readonly string[],
): Record<CallEra, Map<string, CallInstruments>> {
  const requests = new FastCounter({
    name: 'tollgate_provider_requests_total',
    help: 'Tool calls answered, by binding (mcp, rest), era (2026-07-28, 2025, rest), tool and outcome (ok, pending, the contract error or refusal code, merchant_refusal, other).',
    labelNames: ['binding', 'era', 'tool', 'outcome'],
    registers,
  })
  const duration = new FastHistogram({
    name: 'tollgate_provider_request_duration_seconds',
    help: 'Time from a tool call reaching the rules to its answer (store and billing included; reading and verifying the request not), by binding, era and tool.',
    labelNames: ['binding', 'era', 'tool'],
    buckets: REQUEST_SECONDS_BUCKETS,
    registers,
  })
  const tools = [...toolNames, OTHER_LABEL]
  const byEra = (era: CallEra) =>
    new Map(
      tools.map((tool) => {
        const b = BINDING_LABEL[era]
        const e = ERA_LABEL[era]
        const instruments = new CallInstruments(tool, duration.child(b, e, tool), (outcome) =>
          requests.child(b, e, tool, outcome),
        )
        return [tool, instruments] as const
      }),
    )
  return { modern: byEra('modern'), legacy: byEra('legacy'), rest: byEra('rest') }
}

/** One counter child per binding and reason, made at start. */
function refusalCounters(registers: Registry[]): Record<'mcp' | 'rest' | 'none', Map<string, CounterChild>> {
  const refusals = new FastCounter({
    name: 'tollgate_provider_refusals_total',
    help: 'Requests refused before any tool ran, by binding (mcp, rest; none for a Host/Origin refusal, made before routing) and reason (body_too_large 413, body_timeout 408, body_aborted 400, busy 503, host 421, origin 403, credentials 401, signature 401, not_json 400, bad_request 400, no_route 404, method_not_allowed 405).',
    labelNames: ['binding', 'reason'],
    registers,
  })
  const refusalMap = (binding: 'mcp' | 'rest' | 'none') =>
    new Map(REFUSAL_REASONS.map((r) => [r, refusals.child(binding, r)] as const))
  return { mcp: refusalMap('mcp'), rest: refusalMap('rest'), none: refusalMap('none') }
}

/** The gauges read at scrape time from what `watch` was given (nothing before it). */
function sourceGauges(registers: Registry[], sources: () => MetricsSources | undefined): void {
  new Gauge({
    name: 'tollgate_provider_operations_in_progress',
    help: 'Keyed operations (refunds, cancellations) this process is running now: claimed, no outcome recorded yet.',
    registers,
    collect() {
      this.set(sources()?.inProgress() ?? 0)
    },
  })
  new Gauge({
    name: 'tollgate_provider_operations_pending',
    help: "Operations recorded as pending (answered pending, not yet final) in the store: every replica's, read at most every 15 s. Absent when the store cannot say.",
    registers,
    async collect() {
      const n = await sources()
        ?.pending?.()
        .catch(() => undefined)
      if (n === undefined) this.reset()
      else this.set(n)
    },
  })
  new Gauge({
    name: 'tollgate_provider_legacy_sessions_open',
    help: "Open 2025-era MCP sessions in the session store (with a shared PostgreSQL store: every replica's). Absent when the store cannot say.",
    registers,
    async collect() {
      const n = await sources()
        ?.openSessions?.()
        .catch(() => undefined)
      if (n === undefined) this.reset()
      else this.set(n)
    },
  })
}
