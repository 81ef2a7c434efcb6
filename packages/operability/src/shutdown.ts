// Graceful shutdown of a node:http server. Node's own server.close() stops accepting and (Node ≥ 19) closes the
// connections idle at that moment, but a keep-alive connection busy at that moment stays open after its answer, still
// advertises keep-alive, and serves the next request it carries until keepAliveTimeout (measured on Node 20). So the
// requests are tracked: once draining, every answer not yet started carries `Connection: close` (Node then ends the
// connection after it), a connection whose answer had already started is closed as soon as it is idle, and at the
// deadline whatever is left is destroyed. No request can arrive after the deadline (every connection is gone then),
// so none is ever answered 503 by the drain itself: a request arriving during the drain is served, with
// `Connection: close`.
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'

export interface GracefulShutdownOptions {
  /** How long requests already received may take to finish before their connections are destroyed; default 10 000 ms. */
  deadlineMs?: number
  /**
   * How long to go on serving as usual — accepting, keep-alive kept — while readiness answers 503, before the drain
   * starts; default 0. Behind a load balancer, set it to the time its health checks take to mark the server down
   * (interval × failures, plus one interval): until then the balancer still sends requests, some on pooled connections
   * that a drain would close under them.
   */
  delayMs?: number
  /** Told first (readiness answers 503 at once, so balancers stop sending). */
  health?: { setDraining(): void }
}

/** What a shutdown did. */
export interface ShutdownReport {
  /** Requests that were still unanswered at the deadline (their connections destroyed); 0 when all finished. */
  cut: number
  /** True when the deadline was reached before every connection had closed on its own. */
  forced: boolean
}

function checkWholeMs(name: 'deadlineMs' | 'delayMs', ms: number): void {
  if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`${name} must be a whole number ≥ 0`)
}

/**
 * A node:http server whose shutdown is graceful. Create it once the server's request listeners are attached (they are
 * wrapped: each request is tracked until its answer ends, a set insertion and deletion per request).
 */
export class GracefulServer {
  readonly #server: Server
  readonly #options: GracefulShutdownOptions
  readonly #inFlight = new Set<ServerResponse>()
  #draining = false
  #closing: Promise<ShutdownReport> | undefined

  /** RangeError for a deadlineMs that is not a whole number ≥ 0. */
  constructor(server: Server, options: GracefulShutdownOptions = {}) {
    checkWholeMs('deadlineMs', options.deadlineMs ?? 10_000)
    checkWholeMs('delayMs', options.delayMs ?? 0)
    this.#server = server
    this.#options = options
    const listeners = server.listeners('request') as RequestListener[]
    server.removeAllListeners('request')
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (this.#draining) {
        // Arrived on a connection that was open when the drain began: answered, and the connection then ends.
        res.setHeader('connection', 'close')
      }
      this.#inFlight.add(res)
      res.once('close', () => this.#finished(res))
      for (const listener of listeners) listener.call(server, req, res)
    })
  }

  /** Requests received and not yet answered in full. */
  get inFlight(): number {
    return this.#inFlight.size
  }

  get draining(): boolean {
    return this.#draining
  }

  #finished(res: ServerResponse): void {
    this.#inFlight.delete(res)
    // Its answer may have started before the drain (keep-alive advertised): close the connection once idle.
    if (this.#draining) this.#server.closeIdleConnections()
  }

  /**
   * Tells `health` (readiness 503 at once), goes on serving for the delay, then stops accepting, lets every request
   * already received finish up to the deadline (later requests on open connections are answered with `Connection:
   * close`), closes idle connections, destroys what is left at the deadline; resolves once the server has closed.
   * Calling it again returns the same promise.
   */
  close(options: { deadlineMs?: number; delayMs?: number } = {}): Promise<ShutdownReport> {
    const deadlineMs = options.deadlineMs ?? this.#options.deadlineMs ?? 10_000
    checkWholeMs('deadlineMs', deadlineMs)
    const delayMs = options.delayMs ?? this.#options.delayMs ?? 0
    checkWholeMs('delayMs', delayMs)
    this.#options.health?.setDraining()
    this.#closing ??=
      delayMs === 0
        ? this.#drain(deadlineMs)
        : new Promise((r) => setTimeout(r, delayMs)).then(() => this.#drain(deadlineMs))
    return this.#closing
  }

  #drain(deadlineMs: number): Promise<ShutdownReport> {
    return new Promise<ShutdownReport>((resolve) => {
      this.#draining = true
      let cut = 0
      let forced = false
      const timer = setTimeout(() => {
        forced = true
        cut = this.#inFlight.size
        this.#server.closeAllConnections()
      }, deadlineMs)
      for (const res of this.#inFlight) if (!res.headersSent) res.setHeader('connection', 'close')
      // Node ≥ 19: close() also closes the connections idle now; the callback runs once every connection is gone.
      this.#server.close(() => {
        clearTimeout(timer)
        resolve({ cut, forced })
      })
      this.#server.closeIdleConnections()
    })
  }
}
