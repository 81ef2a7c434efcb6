import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node'
import { type AuthInfo, isInitializeRequest, type Server } from '@modelcontextprotocol/server'

interface Session {
  transport: NodeStreamableHTTPServerTransport
  server: Server
  /** The token `sub` that opened the session; any other caller is told the session does not exist. */
  owner: string
  lastSeenMs: number
}

/** Options of the sessionful 2025-era leg. */
export interface LegacySessionOptions {
  build: () => Server
  /** Sessions idle longer are closed; default 15 minutes. */
  idleMs?: number
  /** At most this many open sessions; a new initialize beyond it gets 503. Default 1000. */
  maxSessions?: number
  /** At most this many per caller; opening one more closes that caller's least recently used. Default 16. */
  maxSessionsPerCaller?: number
  onError: (error: unknown) => void
}

const jsonRpcError = (code: number, message: string) =>
  JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null })

/**
 * The 2025-era leg with sessions, as the 2025-11-25 transport describes: `initialize` mints an `Mcp-Session-Id`,
 * later requests must carry it (400 without, 404 for an unknown or foreign one), DELETE ends it. Answers are single
 * JSON bodies. The SDK keeps no idle expiry, so this does; sessions are bound to the caller that opened them.
 */
export class LegacySessions {
  readonly #sessions = new Map<string, Session>()
  readonly #options: Required<Omit<LegacySessionOptions, 'onError'>> & Pick<LegacySessionOptions, 'onError'>
  readonly #sweeper: NodeJS.Timeout

  constructor(options: LegacySessionOptions) {
    this.#options = { idleMs: 15 * 60_000, maxSessions: 1000, maxSessionsPerCaller: 16, ...options }
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(60_000, this.#options.idleMs)).unref()
  }

  get size(): number {
    return this.#sessions.size
  }

  async handle(
    req: IncomingMessage & { auth?: AuthInfo },
    res: ServerResponse,
    parsedBody: unknown,
    caller: string,
  ): Promise<void> {
    const header = req.headers['mcp-session-id']
    const id = Array.isArray(header) ? header[0] : header
    if (id === undefined) {
      if (req.method !== 'POST' || !isInitializeRequest(parsedBody)) {
        return reply(res, 400, jsonRpcError(-32000, 'Bad Request: Mcp-Session-Id header is required'))
      }
      // One caller cannot crowd out the others: its own oldest session makes room first.
      this.#evictOldestOf(caller, this.#options.maxSessionsPerCaller - 1)
      if (this.#sessions.size >= this.#options.maxSessions) {
        return reply(res, 503, jsonRpcError(-32000, 'Too many open sessions; try again later'))
      }
      return this.#open(req, res, parsedBody, caller)
    }
    const session = this.#sessions.get(id)
    // A session opened by another caller is reported exactly like one that never existed.
    if (session === undefined || session.owner !== caller)
      return reply(res, 404, jsonRpcError(-32001, 'Session not found'))
    session.lastSeenMs = Date.now()
    await session.transport.handleRequest(req, res, parsedBody)
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper)
    const all = [...this.#sessions.values()]
    this.#sessions.clear()
    await Promise.allSettled(all.map((s) => s.transport.close()))
  }

  async #open(
    req: IncomingMessage & { auth?: AuthInfo },
    res: ServerResponse,
    parsedBody: unknown,
    caller: string,
  ): Promise<void> {
    const server = this.#options.build()
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sid) => {
        this.#sessions.set(sid, { transport, server, owner: caller, lastSeenMs: Date.now() })
      },
      onsessionclosed: (sid) => {
        this.#sessions.delete(sid)
      },
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.#sessions.delete(transport.sessionId)
    }
    transport.onerror = (error) => this.#options.onError(error)
    await server.connect(transport)
    await transport.handleRequest(req, res, parsedBody)
  }

  #evictOldestOf(caller: string, keep: number): void {
    const own = [...this.#sessions]
      .filter(([, s]) => s.owner === caller)
      .sort((a, b) => a[1].lastSeenMs - b[1].lastSeenMs)
    for (const [id, s] of own.slice(0, Math.max(0, own.length - keep))) {
      this.#sessions.delete(id)
      s.transport.close().catch((error: unknown) => this.#options.onError(error))
    }
  }

  #sweep(): void {
    const cutoff = Date.now() - this.#options.idleMs
    for (const [id, s] of this.#sessions) {
      if (s.lastSeenMs < cutoff) {
        this.#sessions.delete(id)
        s.transport.close().catch((error: unknown) => this.#options.onError(error))
      }
    }
  }
}

function reply(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}
