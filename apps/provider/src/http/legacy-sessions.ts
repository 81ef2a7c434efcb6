// The 2025-era leg: initialize → Mcp-Session-Id, then calls on that session, DELETE closes. Sessions expire when
// idle (the SDK keeps them forever otherwise) and their number is capped.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node'
import type { McpServer } from '@modelcontextprotocol/server'

interface Session {
  transport: NodeStreamableHTTPServerTransport
  server: McpServer
  lastSeenMs: number
}

export interface LegacySessionOptions {
  createServer: () => McpServer
  /** Idle time after which a session is closed. Default 300 000 ms. */
  idleTtlMs?: number
  /** Most sessions open at once; a further initialize gets 503. Default 1000. */
  maxSessions?: number
  /** true: JSON responses (default); false: SSE. */
  jsonResponses?: boolean
  now?: () => number
}

export function jsonRpcError(res: ServerResponse, status: number, code: number, message: string, id: unknown = null) {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id })
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
}

export class LegacySessions {
  readonly #sessions = new Map<string, Session>()
  readonly #options: Required<Omit<LegacySessionOptions, 'createServer'>> & Pick<LegacySessionOptions, 'createServer'>
  readonly #sweeper: NodeJS.Timeout

  constructor(options: LegacySessionOptions) {
    this.#options = {
      createServer: options.createServer,
      idleTtlMs: options.idleTtlMs ?? 300_000,
      maxSessions: options.maxSessions ?? 1000,
      jsonResponses: options.jsonResponses ?? true,
      now: options.now ?? Date.now,
    }
    if (!Number.isInteger(this.#options.idleTtlMs) || this.#options.idleTtlMs < 1)
      throw new RangeError('idleTtlMs must be ≥ 1')
    if (!Number.isInteger(this.#options.maxSessions) || this.#options.maxSessions < 1)
      throw new RangeError('maxSessions must be ≥ 1')
    this.#sweeper = setInterval(() => this.sweep(), Math.min(this.#options.idleTtlMs, 60_000))
    this.#sweeper.unref()
  }

  get size(): number {
    return this.#sessions.size
  }

  /** Closes sessions idle longer than the TTL; returns how many. */
  sweep(): number {
    const cutoff = this.#options.now() - this.#options.idleTtlMs
    let n = 0
    for (const [id, s] of this.#sessions) {
      if (s.lastSeenMs <= cutoff) {
        this.#sessions.delete(id)
        void s.transport.close().catch(() => {})
        n++
      }
    }
    return n
  }

  /** A sessionless initialize: opens a session and answers it (Mcp-Session-Id in the response). */
  async initialize(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (this.#sessions.size >= this.#options.maxSessions) this.sweep()
    if (this.#sessions.size >= this.#options.maxSessions) {
      jsonRpcError(res, 503, -32000, 'too many open sessions; retry later', idOf(body))
      return
    }
    const server = this.#options.createServer()
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: this.#options.jsonResponses,
      onsessioninitialized: (id) => {
        this.#sessions.set(id, { transport, server, lastSeenMs: this.#options.now() })
      },
      onsessionclosed: (id) => {
        this.#sessions.delete(id)
      },
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.#sessions.delete(transport.sessionId)
    }
    await server.connect(transport)
    await transport.handleRequest(req, res, body)
  }

  /** A request on an existing session (POST with a body, or DELETE). Unknown id → 404 (the client re-initializes). */
  async handle(sessionId: string, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const s = this.#sessions.get(sessionId)
    if (s === undefined) {
      jsonRpcError(res, 404, -32001, 'Session not found', idOf(body))
      return
    }
    s.lastSeenMs = this.#options.now()
    await s.transport.handleRequest(req, res, body)
  }

  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper)
    const all = [...this.#sessions.values()]
    this.#sessions.clear()
    await Promise.all(all.map((s) => s.transport.close().catch(() => {})))
  }
}

function idOf(body: unknown): unknown {
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && 'id' in body)
    return (body as { id: unknown }).id
  return null
}
