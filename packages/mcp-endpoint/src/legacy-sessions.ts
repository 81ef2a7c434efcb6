// The 2025-era leg with sessions that live on any replica. The SDK's sessionful transport keeps its session in
// one process's memory and cannot be rebuilt from an id, so this leg never keeps one: initialize mints a
// self-verifying id (SessionIds) and records it in the shared SessionStore; every later request verifies the id,
// checks the store (deleted? idle?) and is served by a fresh server over a stateless SDK transport, exactly like
// the SDK's own stateless idiom. DELETE and idle expiry are records in the store, so every replica honours them.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import {
  type AuthInfo,
  isInitializeRequest,
  type McpServer,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server'
import { EndpointConfigError, SessionStoreError } from './errors.js'
import { jsonRpcError } from './internal/answers.js'
import { ownerHash, SessionIds } from './session-id.js'
import { MemorySessionStore, type SessionStore } from './session-store.js'
import { type AroundToolCall, Exchange, holdsToolCall, type ToolCallExchange } from './tool-call-hook.js'

/** Who is calling, as admission established it: `caller` binds sessions; `authInfo` reaches the SDK handlers. */
export interface Caller {
  caller: string
  authInfo?: AuthInfo
}

export interface LegacySessionsOptions {
  /** A server for one request (the session's state lives in the store, not in the server). */
  createServer: (caller: Caller) => McpServer | Server
  /** Shared record of open sessions; default an in-memory store (one process). */
  store?: SessionStore
  /** MAC key of session ids, ≥ 32 bytes, the same on every replica; default random per process. */
  sessionKey?: Uint8Array | string
  /** A session unseen this long is closed. Default 300 000 ms. */
  idleMs?: number
  /** At most this many open sessions; initialize beyond it gets 503. Default 1000. */
  maxSessions?: number
  /** At most this many per caller; opening one more closes that caller's least recently seen. Default: no limit. */
  maxSessionsPerCaller?: number
  /** true: single JSON answers (default); false: SSE. */
  jsonResponses?: boolean
  now?: () => number
  /**
   * Answers a request on a verified, open session itself and returns true, or returns false untouched (the SDK then
   * answers). Given the one parsed message and the admitted caller; never re-reads the body.
   */
  fastPath?: (message: unknown, req: IncomingMessage, res: ServerResponse, who: Caller) => Promise<boolean>
  /** Runs around every POST holding a tools/call, before its session is checked (see {@link AroundToolCall}). */
  aroundToolCall?: AroundToolCall
  /** Transport and store faults (reporting only). */
  onError?: (error: unknown) => void
}

function whole(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new EndpointConfigError(`${name} must be a whole number ≥ 1`)
  return value
}

/** The message's id when it has one (for error answers), else null. */
export function idOf(body: unknown): unknown {
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && 'id' in body)
    return (body as { id: unknown }).id
  return null
}

/** isInitializeRequest, asked only of a message named `initialize`: its failed zod parse costs far more than this. */
function isInitialize(body: unknown): boolean {
  return (
    body !== null &&
    typeof body === 'object' &&
    (body as { method?: unknown }).method === 'initialize' &&
    isInitializeRequest(body)
  )
}

function isNotificationOnly(body: unknown): boolean {
  const one = (m: unknown) =>
    m !== null &&
    typeof m === 'object' &&
    !Array.isArray(m) &&
    (m as { jsonrpc?: unknown }).jsonrpc === '2.0' &&
    typeof (m as { method?: unknown }).method === 'string' &&
    !('id' in m)
  return Array.isArray(body) ? body.length > 0 && body.every(one) : one(body)
}

export class LegacySessions {
  readonly store: SessionStore
  readonly #ids: SessionIds
  readonly #createServer: LegacySessionsOptions['createServer']
  readonly #idleMs: number
  readonly #maxSessions: number
  readonly #maxPerCaller: number
  readonly #json: boolean
  readonly #now: () => number
  readonly #onError: (error: unknown) => void
  readonly #fastPath: LegacySessionsOptions['fastPath']
  readonly #aroundToolCall: AroundToolCall | undefined
  #fastAnswered = 0
  // The SDK's InitializeResult per requested protocol version, as it first wrote it (JSON mode only): it depends on
  // nothing else, so later initializes are answered with the same bytes without building a server.
  readonly #initializeResults = new Map<string, string>()

  constructor(options: LegacySessionsOptions) {
    this.#createServer = options.createServer
    this.store = options.store ?? new MemorySessionStore()
    this.#ids = new SessionIds(options.sessionKey)
    this.#idleMs = whole('idleMs', options.idleMs ?? 300_000)
    this.#maxSessions = whole('maxSessions', options.maxSessions ?? 1000)
    this.#maxPerCaller = whole('maxSessionsPerCaller', options.maxSessionsPerCaller ?? Number.MAX_SAFE_INTEGER)
    this.#json = options.jsonResponses ?? true
    this.#now = options.now ?? Date.now
    this.#onError = options.onError ?? (() => {})
    this.#fastPath = options.fastPath
    this.#aroundToolCall = options.aroundToolCall
  }

  /** How many requests the fast path answered (a diagnostic for tests and benches). */
  get fastPathAnswered(): number {
    return this.#fastAnswered
  }

  /**
   * One 2025-era request (POST with its already-parsed body, DELETE, or GET) from an admitted caller. The body is
   * never read from `req` again.
   */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, who: Caller): Promise<void> {
    if (this.#aroundToolCall === undefined || !holdsToolCall(body)) return this.#handle(req, res, body, who, undefined)
    return this.#aroundToolCall(new Exchange('legacy', req, res, body, who, EMPTY, undefined), this.#serveExchange)
  }

  readonly #serveExchange = (exchange: ToolCallExchange): Promise<void> =>
    this.#handle(exchange.req, exchange.res, exchange.message, exchange.caller, exchange as Exchange)

  async #handle(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    who: Caller,
    exchange: Exchange | undefined,
  ): Promise<void> {
    const method = req.method ?? 'GET'
    const header = req.headers['mcp-session-id']
    const sessionId = Array.isArray(header) ? undefined : header
    if (method === 'GET') {
      // No standalone SSE stream: a replica could not deliver another replica's notifications on it.
      res.setHeader('allow', 'POST, DELETE')
      return jsonRpcError(res, 405, -32000, 'Method not allowed.')
    }
    if (sessionId === undefined) {
      if (method === 'POST' && isInitialize(body)) return this.#initialize(req, res, body, who)
      return jsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required', idOf(body))
    }
    const key = this.#ids.verify(sessionId, who.caller)
    // A forged id and another caller's id are answered exactly like a closed one.
    if (key === undefined) return jsonRpcError(res, 404, -32001, 'Session not found', idOf(body))
    if (method === 'DELETE') {
      const closed = await this.#store(() => this.store.close(key, this.#now(), this.#idleMs))
      if (closed === undefined) return storeDown(res, body)
      if (!closed) return jsonRpcError(res, 404, -32001, 'Session not found', null)
      res.writeHead(200, { 'content-length': 0 }).end()
      return
    }
    if (method !== 'POST') {
      res.setHeader('allow', 'POST, DELETE')
      return jsonRpcError(res, 405, -32000, 'Method not allowed.')
    }
    const open = await this.#store(() => this.store.touch(key, this.#now(), this.#idleMs))
    if (open === undefined) return storeDown(res, body)
    if (!open) return jsonRpcError(res, 404, -32001, 'Session not found', idOf(body))
    if (isInitialize(body))
      return jsonRpcError(res, 400, -32600, 'Invalid Request: Server already initialized', idOf(body))
    if (isNotificationOnly(body)) {
      // notifications/initialized and friends change nothing in a per-request server: accepted, as the SDK does.
      res.writeHead(202, { 'content-length': 0 }).end()
      return
    }
    res.setHeader('mcp-session-id', sessionId)
    if (this.#fastPath !== undefined && (await this.#fastPath(body, req, res, who))) {
      this.#fastAnswered++
      return
    }
    await this.#serve(req, res, body, who, undefined, exchange)
  }

  async #initialize(req: IncomingMessage, res: ServerResponse, body: unknown, who: Caller): Promise<void> {
    const { id, key } = this.#ids.mint(who.caller)
    const opened = await this.#store(() =>
      this.store.open(key, ownerOf(who), this.#now(), {
        idleMs: this.#idleMs,
        maxSessions: this.#maxSessions,
        maxPerOwner: this.#maxPerCaller,
      }),
    )
    if (opened === undefined) return storeDown(res, body)
    if (!opened) return jsonRpcError(res, 503, -32000, 'Too many open sessions; try again later', idOf(body))
    const requested = (body as { params?: { protocolVersion?: unknown } }).params?.protocolVersion
    const cached = typeof requested === 'string' ? this.#initializeResults.get(requested) : undefined
    const rid = idOf(body)
    if (cached !== undefined && this.#acceptsJson(req) && (typeof rid === 'string' || typeof rid === 'number')) {
      const out = `{"result":${cached},"jsonrpc":"2.0","id":${JSON.stringify(rid)}}`
      res
        .writeHead(200, {
          'content-type': 'application/json',
          'mcp-session-id': id,
          'content-length': Buffer.byteLength(out),
        })
        .end(out)
      this.#fastAnswered++
      return
    }
    const keep =
      this.#json && typeof requested === 'string' && this.#initializeResults.size < 16
        ? (answer: Response) => this.#keepInitializeResult(answer, requested)
        : undefined
    await this.#serve(req, res, body, who, id, undefined, keep)
    // The SDK refused the initialize (bad params…): no session was handed out, so none stays recorded.
    if (res.statusCode !== 200)
      await this.#store(() => this.store.close(key, this.#now(), this.#idleMs)).catch(() => {})
  }

  #acceptsJson(req: IncomingMessage): boolean {
    const accept = req.headers.accept
    const type = req.headers['content-type']
    return (
      this.#json &&
      typeof accept === 'string' &&
      accept.includes('application/json') &&
      accept.includes('text/event-stream') &&
      typeof type === 'string' &&
      type.toLowerCase().startsWith('application/json')
    )
  }

  /** Keeps the SDK's InitializeResult from its 200 JSON answer (the server's own bytes, not input). */
  #keepInitializeResult(answer: Response, requested: string): void {
    if (answer.status !== 200) return
    answer
      .clone()
      .text()
      .then((text) => {
        const parsed = JSON.parse(text) as { result?: { protocolVersion?: unknown } }
        if (typeof parsed.result?.protocolVersion === 'string')
          this.#initializeResults.set(requested, JSON.stringify(parsed.result))
      })
      // Not a single JSON answer: nothing is kept.
      .catch(() => {})
  }

  async #serve(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    who: Caller,
    mintedId: string | undefined,
    exchange: Exchange | undefined,
    onAnswer?: (answer: Response) => void,
  ) {
    const server = this.#createServer(who)
    // The SDK's web-standard transport under the same node adapter its Node transport uses, so that a tool-call
    // exchange's answer head can be replaced on the web Response (see ToolCallExchange.replaceSuccessHead).
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: mintedId === undefined ? undefined : () => mintedId,
      enableJsonResponse: this.#json,
    })
    transport.onerror = (error) => this.#onError(error)
    const teardown = () => {
      transport.close().catch(() => {})
      server.close().catch(() => {})
    }
    if (who.authInfo !== undefined) (req as IncomingMessage & { auth?: AuthInfo }).auth = who.authInfo
    // As the SDK's Node transport passes them: the AuthInfo admission made (undefined without one), the one parse.
    const options = { authInfo: (req as IncomingMessage & { auth?: AuthInfo }).auth, parsedBody: body } as {
      authInfo?: AuthInfo
      parsedBody: unknown
    }
    const listener = getRequestListener(
      async (request) => {
        const response = await transport.handleRequest(request, options)
        onAnswer?.(response)
        return exchange === undefined ? response : exchange.replaceHead(response)
      },
      { overrideGlobalObjects: false },
    )
    await server.connect(transport)
    if (this.#json) {
      try {
        await listener(req, res)
      } finally {
        teardown()
      }
    } else {
      res.once('close', teardown)
      await listener(req, res)
    }
  }

  async #store<T>(op: () => Promise<T>): Promise<T | undefined> {
    try {
      return await op()
    } catch (error) {
      this.#onError(new SessionStoreError({ cause: error }))
      return undefined
    }
  }

  async close(): Promise<void> {
    await this.store.dispose?.()
  }
}

const EMPTY = Buffer.alloc(0)

const ownerOf = (who: Caller) => ownerHashCached(who.caller)
const ownerCache = new Map<string, string>()
function ownerHashCached(caller: string): string {
  let h = ownerCache.get(caller)
  if (h === undefined) {
    h = ownerHash(caller)
    if (ownerCache.size > 10_000) ownerCache.clear()
    ownerCache.set(caller, h)
  }
  return h
}

function storeDown(res: ServerResponse, body: unknown): void {
  res.setHeader('retry-after', '5')
  jsonRpcError(res, 503, -32000, 'Sessions are temporarily unavailable; retry shortly', idOf(body))
}
