// Liveness and readiness, framework-free: a server names its dependency checks, and GET /livez and GET /readyz are
// answered from them on a node:http request. A load balancer probing every 100 ms must not load the store, so one
// round of checks answers every probe for `cacheMs` after it completed, and probes arriving while a round runs share
// it (single flight). Bodies are fixed and tiny: a probe learns "ready" or "not ready", never which dependency failed,
// a configuration value or an error's text (those go to the server's log through onChange).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { CheckTimeoutError } from './errors.js'

/** A dependency check: resolves when the dependency can serve, rejects (throws) when it cannot. */
export type ReadinessCheck = () => Promise<void>

/** A check that failed in a round: its name and what it threw (for logs only, never for a response). */
export interface FailedCheck {
  name: string
  error: unknown
}

/** Readiness of the checks changed (draining aside): ready, or not with the checks that failed. */
export interface ReadinessChange {
  ready: boolean
  failing: readonly FailedCheck[]
}

export interface HealthOptions {
  /** Named dependency checks, run concurrently in each round (more may be added with setCheck). */
  checks?: Readonly<Record<string, ReadinessCheck>>
  /** How long a completed round answers later probes; default 1000 ms (0: every probe runs the checks). */
  cacheMs?: number
  /** A check that has not settled after this long fails its round (CheckTimeoutError); default 2000 ms. */
  checkTimeoutMs?: number
  /**
   * Called when a round's result differs from the previous round's (and after the first round): once per
   * transition, so a server logs an outage once, not once per probe.
   */
  onChange?: (change: ReadinessChange) => void
}

export const LIVEZ_PATH = '/livez'
export const READYZ_PATH = '/readyz'

const READY_BODY = 'ok\n'
const NOT_READY_BODY = 'not ready\n'

/** The path of a request target without its query ('/readyz?x=1' → '/readyz'). */
function pathOf(url: string | undefined): string {
  if (url === undefined) return ''
  const q = url.indexOf('?')
  return q === -1 ? url : url.slice(0, q)
}

/**
 * True when the request target is /livez or /readyz (any query): a server answers these before signatures, tokens
 * and Host checks (a load balancer probes with its own Host and no credentials).
 */
export function isHealthPath(url: string | undefined): boolean {
  if (url === undefined || url.charCodeAt(0) !== 47 /* / */) return false
  const path = pathOf(url)
  return path === LIVEZ_PATH || path === READYZ_PATH
}

function answer(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: string,
  extra?: Record<string, string>,
) {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...extra,
  })
  res.end(req.method === 'HEAD' ? undefined : body)
}

function withTimeout(name: string, check: ReadinessCheck, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckTimeoutError(name, timeoutMs)), timeoutMs)
    timer.unref()
  })
  // A check that throws synchronously fails its round like one that rejects.
  const run = Promise.resolve().then(check)
  return Promise.race([run, timedOut]).finally(() => clearTimeout(timer))
}

/**
 * A server's readiness: its dependency checks, a draining flag, and the /livez and /readyz answers. `handle` suits
 * the public port and the admin listener (startAdminServer's `health`) alike.
 */
export class Health {
  readonly #checks = new Map<string, ReadinessCheck>()
  readonly #cacheMs: number
  readonly #checkTimeoutMs: number
  readonly #onChange: ((change: ReadinessChange) => void) | undefined
  #draining = false
  // Bumped by invalidate() (and setCheck/removeCheck): a round started under an older generation answers the probes
  // that were waiting for it, but neither fills the cache nor counts as a transition.
  #generation = 0
  #round: { generation: number; ready: Promise<boolean> } | undefined
  #cached: { at: number; ready: boolean } | undefined
  #lastReady: boolean | undefined
  #rounds = 0

  /** RangeError for a negative or non-integer cacheMs, or a checkTimeoutMs below 1. */
  constructor(options: HealthOptions = {}) {
    const cacheMs = options.cacheMs ?? 1_000
    if (!Number.isInteger(cacheMs) || cacheMs < 0) throw new RangeError('cacheMs must be a whole number ≥ 0')
    const checkTimeoutMs = options.checkTimeoutMs ?? 2_000
    if (!Number.isInteger(checkTimeoutMs) || checkTimeoutMs < 1)
      throw new RangeError('checkTimeoutMs must be a whole number ≥ 1')
    this.#cacheMs = cacheMs
    this.#checkTimeoutMs = checkTimeoutMs
    this.#onChange = options.onChange
    for (const [name, check] of Object.entries(options.checks ?? {})) this.#checks.set(name, check)
  }

  /** Adds or replaces a named check; the next probe runs a fresh round. */
  setCheck(name: string, check: ReadinessCheck): void {
    this.#checks.set(name, check)
    this.invalidate()
  }

  /** Removes a named check; the next probe runs a fresh round. */
  removeCheck(name: string): void {
    this.#checks.delete(name)
    this.invalidate()
  }

  /**
   * Forgets the cached answer and any round still running: the next probe runs a fresh round, and a round that
   * started before this call (its checks may have passed just before a dependency failed) is never cached or
   * reported as a transition — the probes already waiting for it get its answer. For a server that sees a dependency
   * fail between rounds (a store call answered unavailable), so /readyz does not answer 200 through the outage.
   */
  invalidate(): void {
    this.#generation++
    this.#cached = undefined
  }

  /** From now on /readyz answers 503 at once, whatever the checks say (shutdown: balancers drain the server). */
  setDraining(): void {
    this.#draining = true
  }

  get draining(): boolean {
    return this.#draining
  }

  /** How many rounds of checks ran (each runs every check once): what the cache saves is visible here. */
  get rounds(): number {
    return this.#rounds
  }

  /** True when not draining and every check passed in a round at most cacheMs old (or one run now). */
  async ready(): Promise<boolean> {
    if (this.#draining) return false
    const cached = this.#cached
    if (cached !== undefined && performance.now() - cached.at < this.#cacheMs) return cached.ready
    let round = this.#round
    if (round === undefined || round.generation !== this.#generation) {
      const generation = this.#generation
      const started: NonNullable<typeof round> = {
        generation,
        ready: this.#runRound(generation).finally(() => {
          if (this.#round === started) this.#round = undefined
        }),
      }
      round = started
      this.#round = started
    }
    const ready = await round.ready
    return ready && !this.#draining
  }

  async #runRound(generation: number): Promise<boolean> {
    this.#rounds++
    const entries = [...this.#checks]
    const settled = await Promise.allSettled(
      entries.map(([name, check]) => withTimeout(name, check, this.#checkTimeoutMs)),
    )
    const failing: FailedCheck[] = []
    settled.forEach((s, i) => {
      if (s.status === 'rejected') failing.push({ name: (entries[i] as [string, ReadinessCheck])[0], error: s.reason })
    })
    const ready = failing.length === 0
    // Invalidated while it ran, its answer may predate what invalidated it: never cached (the next probe runs a fresh
    // round), and a 'ready' is not told either — but a 'not ready' is (its checks did fail): when the failing check's
    // own failure is what invalidated the round, no later round may be left to tell it.
    const current = generation === this.#generation
    if (current) this.#cached = { at: performance.now(), ready }
    if (ready !== this.#lastReady && (current || !ready)) {
      this.#lastReady = ready
      try {
        this.#onChange?.({ ready, failing })
      } catch {
        // A logging callback that throws must not turn a probe into a failure.
      }
    }
    return ready
  }

  /**
   * Answers GET/HEAD /livez (200 while the process serves; nothing checked) and /readyz (200 ready, 503 not), 405
   * for another method; returns false, answering nothing, for any other path.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const path = pathOf(req.url)
    if (path !== LIVEZ_PATH && path !== READYZ_PATH) return false
    // A body is never read: drain whatever was sent so the connection stays usable.
    req.resume()
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      answer(req, res, 405, 'method not allowed\n', { allow: 'GET, HEAD' })
      return true
    }
    if (path === LIVEZ_PATH) {
      answer(req, res, 200, READY_BODY)
      return true
    }
    void this.ready().then((ready) => {
      if (!res.destroyed) answer(req, res, ready ? 200 : 503, ready ? READY_BODY : NOT_READY_BODY)
    })
    return true
  }
}
