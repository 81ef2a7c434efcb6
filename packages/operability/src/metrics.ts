// Prometheus metrics with prom-client: one Registry per server (never the global one, so two servers in one process
// keep separate series), bounded label values, and label children bound once instead of looked up per call.
import { collectDefaultMetrics, Registry } from 'prom-client'

export interface MetricsRegistryOptions {
  /**
   * Also export the Node process's own metrics (CPU, memory, event-loop lag, GC, handles) under `prefix`. Default
   * false. Two registries in one process with default metrics each sample the same process.
   */
  defaultMetrics?: boolean
  /** Prefix of the default metrics' names, e.g. 'tollgate_provider_'. Default: none (`process_…`, `nodejs_…`). */
  defaultMetricsPrefix?: string
  /** Labels added to every series of this registry (e.g. `{ replica: 'a' }`); keep them few and fixed. */
  labels?: Record<string, string>
}

/** A registry of its own for one server. */
export function createMetricsRegistry(options: MetricsRegistryOptions = {}): Registry {
  const registry = new Registry()
  if (options.labels !== undefined) registry.setDefaultLabels(options.labels)
  if (options.defaultMetrics === true) {
    const prefix = options.defaultMetricsPrefix ?? ''
    collectDefaultMetrics({ register: registry, prefix })
    // prom-client names three gauges …_total, which promtool refuses (only a counter ends in _total); the same
    // figures are there per type without the suffix (nodejs_active_handles{type=…} etc.).
    for (const gauge of [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ])
      registry.removeSingleMetric(`${prefix}${gauge}`)
  }
  return registry
}

/** The label value given to anything outside a known set. */
export const OTHER_LABEL = 'other'

/**
 * A label whose values come from a fixed set known when the server starts (tool names, error codes, routes): a value
 * outside it becomes `other`, so a caller can never add a series. Never feed it a key, ref, token or `sub`: those are
 * outside any known set by nature and would all read `other`; aggregate them instead.
 */
export class KnownLabel {
  readonly #known: ReadonlySet<string>

  constructor(values: Iterable<string>) {
    this.#known = new Set(values)
    if (this.#known.has('')) throw new RangeError('a label value is not empty')
  }

  /** `value` when it is one of the known values, else `other`. */
  of(value: string): string {
    return this.#known.has(value) ? value : OTHER_LABEL
  }

  /** The known values (to bind children or print a help text). */
  get values(): readonly string[] {
    return [...this.#known]
  }
}

/**
 * A label that keeps the first `max` distinct values it sees and answers `other` for every later one: for a set that is
 * small in practice but not fixed in code (a configured client id, a merchant's own `x_` refusal code). The set never
 * shrinks, so a series, once exported, stays. Not for anything secret or per-caller (a key, ref, token or `sub`).
 */
export class CappedLabel {
  readonly #seen = new Set<string>()
  readonly #max: number

  constructor(max: number) {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('max must be a whole number ≥ 1')
    this.#max = max
  }

  of(value: string): string {
    if (this.#seen.has(value)) return value
    if (this.#seen.size >= this.#max || value === '') return OTHER_LABEL
    this.#seen.add(value)
    return value
  }
}

/**
 * Label children of one metric, bound once per combination of values and then reused: `metric.labels(...)` hashes
 * its arguments on every call, this costs one Map lookup per label. Give it only bounded values (KnownLabel,
 * CappedLabel, constants): every combination it sees stays in memory and in the exposition.
 */
export class BoundChildren<Child> {
  readonly #bind: (...values: string[]) => Child
  readonly #root = new Map<string, unknown>()
  readonly #depth: number

  /** `bind` is e.g. `(...v) => counter.labels(...v)`; `depth` is the number of labels. */
  constructor(depth: number, bind: (...values: string[]) => Child) {
    if (!Number.isSafeInteger(depth) || depth < 1) throw new RangeError('depth must be a whole number ≥ 1')
    this.#depth = depth
    this.#bind = bind
  }

  /** The child for these label values (exactly `depth` of them, in the metric's label order). */
  get(...values: string[]): Child {
    if (values.length !== this.#depth) throw new RangeError(`expected ${this.#depth} label values`)
    let node = this.#root
    for (let i = 0; i < values.length - 1; i++) {
      const v = values[i] as string
      let next = node.get(v) as Map<string, unknown> | undefined
      if (next === undefined) {
        next = new Map()
        node.set(v, next)
      }
      node = next
    }
    const last = values[values.length - 1] as string
    let child = node.get(last) as Child | undefined
    if (child === undefined) {
      child = this.#bind(...values)
      node.set(last, child)
    }
    return child
  }
}

/** Histogram buckets (seconds) for a request answered by a server: 0.5 ms to 10 s. */
export const REQUEST_SECONDS_BUCKETS: readonly number[] = Object.freeze([
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
])

/** Histogram buckets (seconds) for one store or upstream call: 0.1 ms to 5 s. */
export const STORE_SECONDS_BUCKETS: readonly number[] = Object.freeze([
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5,
])
