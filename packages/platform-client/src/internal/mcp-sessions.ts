// MCP sessions in both protocol eras: server/discover on 2026-07-28 (no session, a per-request envelope),
// initialize + initialized + DELETE before it; the era detected once per base URL and cached. Every request is
// signed with an empty key field (seed 002, İmzalama).
import {
  DiscoveryFailed,
  JsonRpcErrorAnswer,
  type RequestPhase,
  ResultNotComplete,
  UnexpectedHttpStatus,
} from '../errors.js'
import { type AttemptOptions, type Era, LEGACY_VERSION, MODERN_VERSION } from '../types.js'
import type { Endpoint } from './endpoint.js'
import type { Received } from './http.js'
import { resultOf } from './messages.js'

/** One attempt's session with the MCP endpoint at `url`. */
export interface Session {
  url: URL
  era: Era
  sessionId: string | undefined
  protocolVersion: string | undefined
}

/** How the era is chosen: fixed, or 'auto' (detected and kept in the cache per base URL). */
export interface EraSettings {
  era: 'auto' | Era
  eraCache: Map<string, Era>
}

type SignatureChoice = AttemptOptions['signatureFor']

/** What opening a session needs: the attempt's signatures and the deadline bounding its requests. */
export interface Opening {
  signatureFor?: SignatureChoice | undefined
  deadline?: number | undefined
}

/** One JSON-RPC message posted in a session. */
export interface Post {
  session: Session
  phase: RequestPhase
  message: Record<string, unknown>
  signatureFor?: SignatureChoice | undefined
  /** Protocol headers of this message (Mcp-Name); Mcp-Method is added on 2026-07-28. */
  headers?: Record<string, string>
  deadline?: number | undefined
  /** Nesting limit of the strict reader for the answer. */
  maxDepth?: number | undefined
}

interface Send {
  session: Session
  phase: RequestPhase
  method: 'POST' | 'DELETE'
  body: Buffer
  signatureFor?: SignatureChoice | undefined
  headers: Record<string, string>
  deadline?: number | undefined
  expectId?: number | undefined
  maxDepth?: number | undefined
}

const LEGACY_RPC_CODES = new Set([-32601, -32600, -32602, -32000, -32022])
const LEGACY_HTTP_STATUSES = new Set([400, 404, 405, 406, 415])
const CLIENT_INFO = { name: 'tollgate-platform-client', version: '0.1.0' }

/** The 2026-07-28 per-request envelope; the platform declares no capabilities ({}). */
export function modernMeta(): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
  }
}

export class McpSessions {
  readonly #endpoint: Endpoint
  readonly #eras: EraSettings
  #rpcId = 0

  constructor(endpoint: Endpoint, eras: EraSettings) {
    this.#endpoint = endpoint
    this.#eras = eras
  }

  /** The era fixed by the options or cached for the URL; undefined when it is still to be detected. */
  knownEra(url: URL): Era | undefined {
    if (this.#eras.era !== 'auto') return this.#eras.era
    return this.#eras.eraCache.get(url.href)
  }

  nextId(): number {
    this.#rpcId += 1
    return this.#rpcId
  }

  /** Opens the attempt's session: server/discover on 2026-07-28, initialize + initialized on a legacy server. */
  async open(url: URL, opening: Opening): Promise<Session> {
    const known = this.knownEra(url)
    if (known !== 'legacy') {
      try {
        const modern: Session = { url, era: MODERN_VERSION, sessionId: undefined, protocolVersion: MODERN_VERSION }
        await this.#discover(modern, opening)
        if (this.#eras.era === 'auto') this.#eras.eraCache.set(url.href, MODERN_VERSION)
        return modern
      } catch (error) {
        if (known === MODERN_VERSION || !isLegacyAnswer(error)) throw error
        this.#eras.eraCache.set(url.href, 'legacy')
      }
    }
    return this.#initialize(url, opening)
  }

  /** DELETE closes a session the server assigned; its outcome never changes the call's answer. */
  async close(session: Session, signatureFor?: SignatureChoice): Promise<void> {
    if (session.sessionId === undefined) return
    try {
      await this.#send({ session, phase: 'delete', method: 'DELETE', body: Buffer.alloc(0), signatureFor, headers: {} })
    } catch {
      // A failed close leaves nothing to do: the attempt's answer is already known.
    }
  }

  post(request: Post): Promise<Received> {
    const { session, message } = request
    const body = Buffer.from(JSON.stringify(message), 'utf8')
    const headers: Record<string, string> = { ...request.headers }
    if (session.era === MODERN_VERSION) headers['mcp-method'] = String(message.method)
    else delete headers['mcp-name']
    return this.#send({
      session,
      phase: request.phase,
      method: 'POST',
      body,
      signatureFor: request.signatureFor,
      headers,
      deadline: request.deadline,
      expectId: typeof message.id === 'number' ? message.id : undefined,
      maxDepth: request.maxDepth,
    })
  }

  async #discover(modern: Session, opening: Opening): Promise<void> {
    const message = { jsonrpc: '2.0', id: this.nextId(), method: 'server/discover', params: { _meta: modernMeta() } }
    const received = await this.post({ session: modern, phase: 'discover', message, ...opening })
    const result = resultOf(received, 'discover')
    const versions = result.supportedVersions
    if (!Array.isArray(versions) || !versions.some((v) => v === MODERN_VERSION)) throw new NotModern()
    if (result.resultType !== undefined && result.resultType !== 'complete') throw new ResultNotComplete()
  }

  async #initialize(url: URL, opening: Opening): Promise<Session> {
    const message = {
      jsonrpc: '2.0',
      id: this.nextId(),
      method: 'initialize',
      // The platform declares no capabilities.
      params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
    }
    const unopened: Session = { url, era: 'legacy', sessionId: undefined, protocolVersion: undefined }
    const received = await this.post({ session: unopened, phase: 'initialize', message, ...opening })
    const result = resultOf(received, 'initialize')
    const version = result.protocolVersion
    if (typeof version !== 'string' || version === '')
      throw new DiscoveryFailed('initialize returned no protocolVersion')
    const header = received.headers['mcp-session-id']
    const session: Session = {
      url,
      era: 'legacy',
      sessionId: typeof header === 'string' && header !== '' ? header : undefined,
      protocolVersion: version,
    }
    try {
      const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' }
      const note = await this.post({ session, phase: 'initialized', message: initialized, ...opening })
      if (note.status < 200 || note.status >= 300) {
        throw new UnexpectedHttpStatus(note.status, 'initialized', note.kind === 'body' ? note.body : Buffer.alloc(0))
      }
    } catch (error) {
      await this.close(session, opening.signatureFor)
      throw error
    }
    return session
  }

  async #send(request: Send): Promise<Received> {
    const { session, method, body } = request
    const { url } = session
    const endpoint = this.#endpoint
    const timeoutMs = endpoint.timeoutWithin(request.deadline)
    const headers = endpoint.headers(url)
    if (method === 'POST') {
      headers['content-type'] = 'application/json'
      headers.accept = 'application/json, text/event-stream'
    }
    if (session.protocolVersion !== undefined) headers['mcp-protocol-version'] = session.protocolVersion
    if (session.sessionId !== undefined) headers['mcp-session-id'] = session.sessionId
    Object.assign(headers, request.headers)
    const mode = request.signatureFor?.(request.phase) ?? 'valid'
    // Over MCP the key field is always empty (seed 002, İmzalama).
    Object.assign(headers, endpoint.sign({ method, host: url.host, path: url.pathname, body, key: '' }, mode))
    return endpoint.exchange(
      { method, url, headers, body },
      { phase: request.phase, timeoutMs, expectId: request.expectId, maxDepth: request.maxDepth },
    )
  }
}

class NotModern extends DiscoveryFailed {
  constructor() {
    super('server/discover does not list 2026-07-28')
  }
}

function isLegacyAnswer(error: unknown): boolean {
  if (error instanceof NotModern) return true
  if (error instanceof UnexpectedHttpStatus) return LEGACY_HTTP_STATUSES.has(error.status)
  if (error instanceof JsonRpcErrorAnswer) return LEGACY_RPC_CODES.has(error.rpcCode)
  return false
}
