import { randomUUID } from 'node:crypto'
import { validateHeaderName, validateHeaderValue } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  contractValidator,
  errorHttpStatus,
  PROFILE_TOOLS,
  type ProfileToolName,
  type ToolResult,
} from '@tollgate/contract'
import { signHeaders } from '@tollgate/signing'
import type { JsonObject } from '@tollgate/strict-json'
import { checkBaseUrl } from './base-url.js'
import {
  DiscoveryFailed,
  InvalidResult,
  JsonRpcErrorAnswer,
  MalformedBody,
  PlatformClientError,
  type RequestPhase,
  RequestTimedOut,
  ResultNotComplete,
  ToolListMalformed,
  UnexpectedHttpStatus,
} from './errors.js'
import { exchange, type Outgoing, type Received } from './internal/http.js'
import { isObject, plain, resultOf } from './internal/messages.js'
import { readRestAnswer } from './internal/rest-answers.js'
import { pathPrefix, restRequestOf } from './internal/rest-routes.js'
import { retryAfterMs } from './internal/retry-after.js'
import { TOOL_LIST_MAX_DEPTH } from './limits.js'

/** The protocol era a server speaks: the 2026-07-28 revision, or the session-based one before it. */
export type Era = '2026-07-28' | 'legacy'

export const MODERN_VERSION = '2026-07-28'
export const LEGACY_VERSION = '2025-11-25'
/** The contract's error envelope schema (structuredContent of an isError result). */
export const ERROR_ENVELOPE_REF = 'error.json'

/** The binding a provider serves: MCP tools, or the seed's REST routes (rest-binding.md). */
export type Transport = 'mcp' | 'rest'

/** How the platform reaches one provider. */
export interface PlatformClientOptions {
  /**
   * The provider's endpoint: over MCP the MCP URL (https://billing.example.com/mcp); over REST the base URL the
   * `/v1/…` routes hang from, which may carry a path prefix (https://billing.example.com/chargeless).
   */
  baseUrl: string
  /** 'mcp' (default) or 'rest'. */
  transport?: Transport
  /** The signing secret (srmps_… sandbox, srmp_… production); never logged. */
  secret: string
  /** Allow private/loopback addresses, any port, and plain http on loopback. Default false. */
  allowPrivate?: boolean
  /** Sent as `Authorization: Bearer …` on every request when set. */
  bearerToken?: string
  /** Extra headers sent on every request (an edge or WAF token), never overriding protocol headers. */
  edgeHeaders?: Record<string, string>
  /** 'auto' (default) tries server/discover and falls back to initialize on a legacy-era answer. */
  era?: 'auto' | Era
  /** Per HTTP request, default 30000. */
  timeoutMs?: number
  /** Largest accepted answer, default 1 MiB. */
  maxBodyBytes?: number
  /** Attempts of one call when the outcome counts as a 5xx, default 3. */
  maxAttempts?: number
  /** Pause before a retry, multiplied by the attempt number; default 200. */
  retryDelayMs?: number
  /**
   * The deadline of one callTool, from its start: its attempts and every wait between them; default 90000 (the
   * default maxAttempts × timeoutMs). No wait reaches past it, and each request's timeout is cut to what is left.
   */
  callTimeoutMs?: number
  /**
   * The longest Retry-After that callTool waits for (409 in_progress, 429, 503); default 10000. A longer one is not
   * waited for: the call ends with that answer at once (its retryAfterMs says when to come back).
   */
  maxRetryAfterMs?: number
  /** The signing clock, default the system clock. */
  now?: () => Date
  /** Where detected eras are cached per base URL; default a module-wide cache. */
  eraCache?: Map<string, Era>
  /**
   * Certificate authorities (PEM) trusted for an https base URL in place of Node's bundled ones — a private CA for
   * a provider's staging or test certificate. Default: the system's trust (plus NODE_EXTRA_CA_CERTS). The
   * platform itself trusts public CAs only.
   */
  ca?: string | readonly string[]
  /** Aborting it ends a wait between attempts at once (the call rejects with the signal's reason). */
  signal?: AbortSignal
}

/** The correlation identifiers a call carries in `_meta` (MCP) or the X-SupportRoute-* headers (REST). */
export interface CallContext {
  correlationId: string
  channel: string
  externalTicket?: string
}

/** How one request of an attempt is signed: correctly, with a broken signature, or with an old timestamp. */
export type SignatureMode = 'valid' | 'broken' | { staleSeconds: number }

/**
 * REST only: how the signature's key field and the Idempotency-Key header disagree (a conformance check's probe;
 * each must be refused 401): the header carries another key than the one signed, the key field is signed empty
 * (the MCP form) while the header is sent, or the header is removed after signing over the key.
 */
export type KeyFieldFault = 'header_differs' | 'signed_empty' | 'header_removed'

/** Knobs of a single attempt, used by conformance checks. */
export interface AttemptOptions {
  /** Chooses the signature per request; default every request valid. */
  signatureFor?: (phase: RequestPhase) => SignatureMode
  /** REST only (needs an idempotency_key in the arguments): breaks the key field's binding on purpose. */
  keyFieldFault?: KeyFieldFault
  /** Epoch ms bounding the attempt's requests (each request's timeout is cut to what is left). */
  deadline?: number
}

/**
 * One attempt's answer: the validated object, or the validated error envelope with its REST status. `T` is the
 * tool's result type (the contract's generated type, e.g. Transaction for sr_get_transaction) when the tool's name
 * is known at compile time; the object has passed the contract's runtime validation before it is typed so.
 */
export type ToolOutcome<T = unknown> =
  | { kind: 'result'; status: 200; value: T; era: Era | null; requestId: string; body?: Buffer }
  | {
      kind: 'error'
      /** Over MCP the seed's table status of the code; over REST the HTTP status as received. */
      status: number
      code: string
      retryable: boolean
      message: string
      /** The error envelope ({"error":{code,message,retryable}}), validated against error.json. */
      value: unknown
      /** The MCP era; null over REST. */
      era: Era | null
      requestId: string
      /** REST only: the received body, byte for byte (a replay is compared on these bytes). */
      body?: Buffer
      /** The answer's Retry-After in milliseconds, when it carried one (409 in_progress, 429, 503). */
      retryAfterMs?: number
    }

/** A call's answer after retries; 'verified' when retries ran out and sr_get_operation was asked. */
export type CallResult<T = unknown> =
  | (ToolOutcome<T> & { attempts: number })
  | {
      kind: 'verified'
      operation: unknown
      attempts: number
      /** The last attempt's failure: an ERR_PLATFORM_… code or a 5xx envelope code (internal_error, unavailable). */
      lastFailure: string
    }

/** One page of tools/list, read strictly (numbers may be fractional in schemas). */
export interface ToolPage {
  tools: unknown[]
  nextCursor: string | undefined
}

export interface ToolListing {
  era: Era
  pages: ToolPage[]
  /** true when the server offered more pages than maxPages (reading stopped at maxPages + 1). */
  truncated: boolean
}

const defaultEraCache = new Map<string, Era>()
const LEGACY_RPC_CODES = new Set([-32601, -32600, -32602, -32000, -32022])
const LEGACY_HTTP_STATUSES = new Set([400, 404, 405, 406, 415])

type ResolvedOptions = Required<Omit<PlatformClientOptions, 'bearerToken' | 'edgeHeaders' | 'era' | 'ca' | 'signal'>> &
  Pick<PlatformClientOptions, 'bearerToken' | 'edgeHeaders' | 'ca' | 'signal'> & { era: 'auto' | Era }

const DEFAULTS = {
  transport: 'mcp',
  allowPrivate: false,
  era: 'auto',
  timeoutMs: 30_000,
  maxBodyBytes: 1024 * 1024,
  maxAttempts: 3,
  retryDelayMs: 200,
  callTimeoutMs: 90_000,
  maxRetryAfterMs: 10_000,
} as const

/** The shortest wait on a Retry-After (a `Retry-After: 0` must not spin): also never below retryDelayMs. */
const MIN_RETRY_AFTER_WAIT_MS = 50

/**
 * Calls merchant-provider/v1 tools the way the platform does: over MCP one session per attempt, over REST one
 * request per attempt; signed requests, strict reading and contract validation of the answer. Throws TypeError
 * (wrong type, missing secret or base URL) or RangeError (a number out of range) naming the option.
 */
export class PlatformClient {
  readonly #options: ResolvedOptions
  #url: URL | undefined
  #rpcId = 0

  constructor(options: PlatformClientOptions) {
    if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object')
    if (typeof options.secret !== 'string' || options.secret === '')
      throw new TypeError('secret is required (the signing secret)')
    if (typeof options.baseUrl !== 'string' || options.baseUrl === '') throw new TypeError('baseUrl is required')
    checkOptionValues(options)
    checkConfiguredHeaders(options)
    // An option given as undefined keeps its default (a spread would let it replace the default).
    const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined))
    this.#options = {
      ...DEFAULTS,
      now: () => new Date(),
      eraCache: defaultEraCache,
      ...given,
    } as ResolvedOptions
  }

  /** The binding this client speaks. */
  get transport(): Transport {
    return this.#options.transport
  }

  /** The era this client uses for the base URL (detecting it with a discovery when not known yet). MCP only. */
  async era(): Promise<Era> {
    this.#mcpOnly('era()')
    const url = await this.#baseUrl()
    return this.#knownEra(url) ?? this.discover()
  }

  /**
   * Opens and closes one session (server/discover, or initialize + initialized + DELETE) and returns the era it
   * used; detects and caches the era when it is not known. Throws PlatformClientError.
   */
  async discover(): Promise<Era> {
    this.#mcpOnly('discover()')
    const url = await this.#baseUrl()
    const session = await this.#handshake(url, {})
    await this.#close(url, session, {})
    return session.era
  }

  /**
   * Calls a profile tool: attempts until an answer that does not count as a 5xx (at most maxAttempts, the same
   * arguments and key each time); when they run out and the arguments carry an idempotency_key, asks
   * sr_get_operation. Throws the last PlatformClientError otherwise.
   */
  async callTool<N extends ProfileToolName>(
    name: N,
    args: Record<string, unknown>,
    context: CallContext,
  ): Promise<CallResult<ToolResult<N>>>
  async callTool(name: string, args: Record<string, unknown>, context: CallContext): Promise<CallResult>
  async callTool(name: string, args: Record<string, unknown>, context: CallContext): Promise<CallResult> {
    const deadline = Date.now() + this.#options.callTimeoutMs
    // The last failure: a thrown error or an error envelope (5xx-class, or one that asked to be retried later).
    let last: { error: PlatformClientError } | { outcome: ToolOutcome } | undefined
    let attempts = 0
    // Attempts that failed as a 5xx without a Retry-After: these count against maxAttempts.
    let failures = 0
    for (;;) {
      attempts += 1
      let hinted: number | undefined
      try {
        const outcome = await this.attempt(name, args, context, { deadline })
        hinted = retryLater(outcome)
        if (hinted === undefined && (outcome.kind !== 'error' || outcome.status < 500)) return { ...outcome, attempts }
        last = { outcome }
      } catch (error) {
        if (!(error instanceof PlatformClientError)) throw error
        hinted = retryLater(error)
        if (hinted === undefined && !error.retryable) throw error
        last = { error }
      }
      let wait: number
      if (hinted !== undefined) {
        // The answer said when to come back: waited for when it fits under the cap and before the deadline.
        wait = Math.max(hinted, this.#options.retryDelayMs, MIN_RETRY_AFTER_WAIT_MS)
        if (hinted > this.#options.maxRetryAfterMs) break
      } else {
        failures += 1
        if (failures >= this.#options.maxAttempts) break
        wait = this.#options.retryDelayMs * failures
      }
      if (Date.now() + wait >= deadline) break
      await sleep(wait, undefined, this.#options.signal === undefined ? {} : { signal: this.#options.signal })
    }
    // A refusal that asked to be retried later (409 in_progress, 429) is the answer when the wait does not fit.
    if ('outcome' in last && last.outcome.status < 500) return { ...last.outcome, attempts }
    if ('error' in last && !last.error.retryable) throw last.error
    const lastFailure = 'error' in last ? last.error.code : (last.outcome as { code: string }).code
    const key = args.idempotency_key
    if (typeof key === 'string' && name !== 'sr_get_operation') {
      try {
        const check = await this.attempt('sr_get_operation', { idempotency_key: key }, context)
        if (check.kind === 'result') return { kind: 'verified', operation: check.value, attempts, lastFailure }
      } catch {
        // The verification failing leaves the original failure as the answer.
      }
    }
    if ('error' in last) throw last.error
    return { ...last.outcome, attempts }
  }

  /**
   * One attempt. MCP: its own session, one tools/call, closed. REST: one signed request to the tool's route.
   * Throws PlatformClientError for any failure.
   */
  async attempt<N extends ProfileToolName>(
    name: N,
    args: Record<string, unknown>,
    context: CallContext,
    options?: AttemptOptions,
  ): Promise<ToolOutcome<ToolResult<N>>>
  async attempt(
    name: string,
    args: Record<string, unknown>,
    context: CallContext,
    options?: AttemptOptions,
  ): Promise<ToolOutcome>
  async attempt(
    name: string,
    args: Record<string, unknown>,
    context: CallContext,
    options: AttemptOptions = {},
  ): Promise<ToolOutcome> {
    const tool = PROFILE_TOOLS.find((t) => t.name === name)
    if (!tool) throw new TypeError('not a profile tool')
    if (this.#options.transport === 'rest') return this.#attemptRest(name, tool.outputRef, args, context, options)
    if (options.keyFieldFault !== undefined) throw new TypeError('keyFieldFault applies to the REST transport only')
    const url = await this.#baseUrl()
    const requestId = randomUUID()
    const meta: Record<string, unknown> = {
      'dev.supportroute/request_id': requestId,
      'dev.supportroute/correlation_id': context.correlationId,
      'dev.supportroute/channel': context.channel,
    }
    if (context.externalTicket !== undefined) meta['dev.supportroute/external_ticket'] = context.externalTicket
    const session = await this.#handshake(url, options, options.deadline)
    try {
      const id = this.#nextId()
      const body = {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name, arguments: args, _meta: session.era === MODERN_VERSION ? { ...modernMeta(), ...meta } : meta },
      }
      const received = await this.#post(
        url,
        'tools/call',
        body,
        session,
        options,
        { 'mcp-name': name },
        options.deadline,
      )
      const result = resultOf(received, 'tools/call')
      const outcome = readToolResult(result, tool.outputRef, session.era, requestId)
      // The MCP answer travels in a 200; a provider may still say when to come back (its fast path does on 503s).
      const retryAfter = retryAfterMs(received.headers)
      return outcome.kind === 'error' && retryAfter !== undefined ? { ...outcome, retryAfterMs: retryAfter } : outcome
    } finally {
      await this.#close(url, session, options)
    }
  }

  /**
   * Lists tools in one session, following nextCursor; reads at most maxPages + 1 pages (then truncated is
   * true). deadline (epoch ms) bounds the whole listing: passing it throws RequestTimedOut.
   */
  async listTools(options: { maxPages: number; deadline?: number }): Promise<ToolListing> {
    this.#mcpOnly('listTools()')
    const url = await this.#baseUrl()
    const deadline = options.deadline
    const session = await this.#handshake(url, {}, deadline)
    try {
      const pages: ToolPage[] = []
      let cursor: string | undefined
      do {
        const id = this.#nextId()
        const params: Record<string, unknown> = {}
        if (cursor !== undefined) params.cursor = cursor
        if (session.era === MODERN_VERSION) params._meta = modernMeta()
        const received = await this.#post(
          url,
          'tools/list',
          { jsonrpc: '2.0', id, method: 'tools/list', params },
          session,
          {},
          {},
          deadline,
          TOOL_LIST_MAX_DEPTH,
        )
        const result = resultOf(received, 'tools/list', TOOL_LIST_MAX_DEPTH)
        if (result.resultType !== undefined && result.resultType !== 'complete') throw new ResultNotComplete()
        const tools = result.tools
        if (!Array.isArray(tools)) throw new ToolListMalformed('the result has no tools array')
        const next = result.nextCursor
        if (next !== undefined && next !== null && typeof next !== 'string')
          throw new ToolListMalformed('nextCursor is not a string')
        cursor = typeof next === 'string' && next !== '' ? next : undefined
        pages.push({ tools: tools.map((t) => plain(t, false)), nextCursor: cursor })
      } while (cursor !== undefined && pages.length <= options.maxPages)
      return { era: session.era, pages, truncated: cursor !== undefined }
    } finally {
      await this.#close(url, session, {})
    }
  }

  // REST (rest-binding.md): the key in the Idempotency-Key header and in the signature's key field, the
  // correlation ids in X-SupportRoute-* headers (request id new per attempt), the answer read strictly.
  async #attemptRest(
    name: string,
    outputRef: string,
    args: Record<string, unknown>,
    context: CallContext,
    options: AttemptOptions,
  ): Promise<ToolOutcome> {
    const rest = restRequestOf(name, args)
    const url = await this.#baseUrl()
    const requestId = randomUUID()
    const path = pathPrefix(url) + rest.route
    const body = rest.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(rest.body), 'utf8')
    const headers = this.#commonHeaders(url)
    headers.accept = 'application/json'
    if (rest.method === 'POST') headers['content-type'] = 'application/json'
    headers['x-supportroute-request-id'] = requestId
    headers['x-supportroute-correlation-id'] = context.correlationId
    headers['x-supportroute-channel'] = context.channel
    if (context.externalTicket !== undefined) headers['x-supportroute-external-ticket'] = context.externalTicket
    const { signedKey, headerKey } = keyField(rest.idempotencyKey, options.keyFieldFault)
    if (headerKey !== undefined) headers['idempotency-key'] = headerKey
    const mode = options.signatureFor?.('rest') ?? 'valid'
    Object.assign(headers, this.#sign(url.host, path, rest.method, body, signedKey, mode))
    const received = await exchange(
      { method: rest.method, url, path, headers, body },
      {
        phase: 'rest',
        allowPrivate: this.#options.allowPrivate,
        timeoutMs: timeoutWithin(this.#options.timeoutMs, options.deadline),
        maxBodyBytes: this.#options.maxBodyBytes,
        sse: false,
        ...(this.#options.ca !== undefined && { ca: this.#options.ca }),
      },
    )
    const answer = readRestAnswer(received, outputRef, ERROR_ENVELOPE_REF)
    return { ...answer, era: null, requestId }
  }

  #mcpOnly(what: string): void {
    if (this.#options.transport !== 'mcp') throw new TypeError(`${what} is MCP only (transport is rest)`)
  }

  // Bearer token, edge headers and Host: sent on every request of both transports.
  #commonHeaders(url: URL): Record<string, string> {
    const headers: Record<string, string> = { ...(this.#options.edgeHeaders ?? {}) }
    if (this.#options.bearerToken !== undefined) headers.authorization = `Bearer ${this.#options.bearerToken}`
    headers.host = url.host
    return headers
  }

  async #baseUrl(): Promise<URL> {
    if (this.#url === undefined)
      this.#url = await checkBaseUrl(this.#options.baseUrl, { allowPrivate: this.#options.allowPrivate })
    return this.#url
  }

  #knownEra(url: URL): Era | undefined {
    if (this.#options.era !== 'auto') return this.#options.era
    return this.#options.eraCache.get(url.href)
  }

  // Opens the attempt's session: server/discover on 2026-07-28, initialize + initialized on a legacy server.
  async #handshake(url: URL, options: AttemptOptions, deadline?: number): Promise<Session> {
    const known = this.#knownEra(url)
    if (known !== 'legacy') {
      try {
        await this.#discover(url, options, deadline)
        if (this.#options.era === 'auto') this.#options.eraCache.set(url.href, MODERN_VERSION)
        return { era: MODERN_VERSION, sessionId: undefined, protocolVersion: MODERN_VERSION }
      } catch (error) {
        if (known === MODERN_VERSION || !isLegacyAnswer(error)) throw error
        this.#options.eraCache.set(url.href, 'legacy')
      }
    }
    return this.#initialize(url, options, deadline)
  }

  async #discover(url: URL, options: AttemptOptions, deadline?: number): Promise<void> {
    const body = { jsonrpc: '2.0', id: this.#nextId(), method: 'server/discover', params: { _meta: modernMeta() } }
    const modern: Session = { era: MODERN_VERSION, sessionId: undefined, protocolVersion: MODERN_VERSION }
    const received = await this.#post(url, 'discover', body, modern, options, {}, deadline)
    const result = resultOf(received, 'discover')
    const versions = result.supportedVersions
    if (!Array.isArray(versions) || !versions.some((v) => v === MODERN_VERSION)) throw new NotModern()
    if (result.resultType !== undefined && result.resultType !== 'complete') throw new ResultNotComplete()
  }

  async #initialize(url: URL, options: AttemptOptions, deadline?: number): Promise<Session> {
    const body = {
      jsonrpc: '2.0',
      id: this.#nextId(),
      method: 'initialize',
      // The platform declares no capabilities.
      params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
    }
    const opening: Session = { era: 'legacy', sessionId: undefined, protocolVersion: undefined }
    const received = await this.#post(url, 'initialize', body, opening, options, {}, deadline)
    const result = resultOf(received, 'initialize')
    const version = result.protocolVersion
    if (typeof version !== 'string' || version === '')
      throw new DiscoveryFailed('initialize returned no protocolVersion')
    const header = received.headers['mcp-session-id']
    const session: Session = {
      era: 'legacy',
      sessionId: typeof header === 'string' && header !== '' ? header : undefined,
      protocolVersion: version,
    }
    try {
      const note = await this.#post(
        url,
        'initialized',
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        session,
        options,
        {},
        deadline,
      )
      if (note.status < 200 || note.status >= 300) {
        throw new UnexpectedHttpStatus(note.status, 'initialized', note.kind === 'body' ? note.body : Buffer.alloc(0))
      }
    } catch (error) {
      await this.#close(url, session, options)
      throw error
    }
    return session
  }

  // DELETE closes a session the server assigned; its outcome never changes the call's answer.
  async #close(url: URL, session: Session, options: AttemptOptions): Promise<void> {
    if (session.sessionId === undefined) return
    try {
      await this.#send(url, 'delete', 'DELETE', Buffer.alloc(0), session, options, {})
    } catch {
      // A failed close leaves nothing to do: the attempt's answer is already known.
    }
  }

  #post(
    url: URL,
    phase: RequestPhase,
    message: Record<string, unknown>,
    session: Session,
    options: AttemptOptions,
    extra: Record<string, string>,
    deadline?: number,
    maxDepth?: number,
  ): Promise<Received> {
    const body = Buffer.from(JSON.stringify(message), 'utf8')
    const headers: Record<string, string> = { ...extra }
    if (session.era === MODERN_VERSION) headers['mcp-method'] = String(message.method)
    else delete headers['mcp-name']
    return this.#send(
      url,
      phase,
      'POST',
      body,
      session,
      options,
      headers,
      deadline,
      typeof message.id === 'number' ? message.id : undefined,
      maxDepth,
    )
  }

  async #send(
    url: URL,
    phase: RequestPhase,
    method: 'POST' | 'DELETE',
    body: Buffer,
    session: Session,
    options: AttemptOptions,
    extra: Record<string, string>,
    deadline?: number,
    expectId?: number,
    maxDepth?: number,
  ): Promise<Received> {
    const timeoutMs = timeoutWithin(this.#options.timeoutMs, deadline)
    const headers = this.#commonHeaders(url)
    if (method === 'POST') {
      headers['content-type'] = 'application/json'
      headers.accept = 'application/json, text/event-stream'
    }
    if (session.protocolVersion !== undefined) headers['mcp-protocol-version'] = session.protocolVersion
    if (session.sessionId !== undefined) headers['mcp-session-id'] = session.sessionId
    Object.assign(headers, extra)
    // Over MCP the key field is always empty (seed 002, İmzalama).
    Object.assign(
      headers,
      this.#sign(url.host, url.pathname, method, body, '', options.signatureFor?.(phase) ?? 'valid'),
    )
    const out: Outgoing = { method, url, headers, body }
    return exchange(out, {
      phase,
      allowPrivate: this.#options.allowPrivate,
      timeoutMs,
      maxBodyBytes: this.#options.maxBodyBytes,
      ...(this.#options.ca !== undefined && { ca: this.#options.ca }),
      ...(expectId === undefined ? {} : { expectId }),
      ...(maxDepth === undefined ? {} : { maxDepth }),
    })
  }

  #sign(
    host: string,
    path: string,
    method: string,
    body: Buffer,
    key: string,
    mode: SignatureMode,
  ): Record<string, string> {
    const now =
      typeof mode === 'object'
        ? new Date(this.#options.now().getTime() - mode.staleSeconds * 1000)
        : this.#options.now()
    const signed = signHeaders(this.#options.secret, { method, host, path, body, key }, now)
    if (mode !== 'broken') return signed
    const out: Record<string, string> = {}
    for (const [name, value] of Object.entries(signed)) {
      // Flip the last hex digit: a well-formed signature that does not match.
      out[name] =
        name.toLowerCase() === 'x-supportroute-signature'
          ? value.slice(0, -1) + (value.endsWith('0') ? '1' : '0')
          : value
    }
    return out
  }

  #nextId(): number {
    this.#rpcId += 1
    return this.#rpcId
  }
}

// Headers the protocol or the signature owns, and the ones the platform never sends: a configured edge header
// may not take their place (a Mcp-Param-* edge header would break "never sends Mcp-Param-*").
const RESERVED_HEADER =
  /^(host|content-type|content-length|transfer-encoding|connection|accept|authorization|idempotency-key|last-event-id|mcp-.*|x-supportroute-.*)$/i

// Misconfiguration is caller misuse: refused at construction, not discovered per request as a network failure.
function checkConfiguredHeaders(options: PlatformClientOptions): void {
  for (const [name, value] of Object.entries(options.edgeHeaders ?? {})) {
    if (RESERVED_HEADER.test(name)) throw new TypeError(`edge header ${name} is reserved`)
    try {
      validateHeaderName(name)
      validateHeaderValue(name, value)
    } catch {
      throw new TypeError(`edge header ${name} is not a valid header`)
    }
  }
  if (options.bearerToken !== undefined) {
    try {
      validateHeaderValue('authorization', `Bearer ${options.bearerToken}`)
    } catch {
      throw new TypeError('the bearer token is not a valid header value')
    }
    if (options.bearerToken === '') throw new TypeError('the bearer token is empty')
  }
}

// What the signature's key field covers and what the Idempotency-Key header carries; equal unless a probe asks.
function keyField(
  key: string | undefined,
  fault: KeyFieldFault | undefined,
): { signedKey: string; headerKey?: string } {
  if (fault === undefined) return key === undefined ? { signedKey: '' } : { signedKey: key, headerKey: key }
  if (key === undefined) throw new TypeError('keyFieldFault needs an idempotency_key in the arguments')
  if (fault === 'header_differs') return { signedKey: key, headerKey: `${key}:other` }
  if (fault === 'signed_empty') return { signedKey: '', headerKey: key }
  return { signedKey: key }
}

const NUMERIC_OPTIONS = [
  // name, smallest accepted; at most 2^31-1 (what a timer accepts).
  ['timeoutMs', 1],
  ['maxBodyBytes', 1],
  ['maxAttempts', 1],
  ['retryDelayMs', 0],
  ['callTimeoutMs', 1],
  ['maxRetryAfterMs', 0],
] as const

// Misuse is refused at construction, naming the option (never its value: options may sit next to secrets).
function checkOptionValues(options: PlatformClientOptions): void {
  for (const [name, min] of NUMERIC_OPTIONS) {
    const value = options[name]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`${name} must be an integer`)
    if (value < min || value > 2 ** 31 - 1) throw new RangeError(`${name} must be between ${min} and ${2 ** 31 - 1}`)
  }
  const oneOf = (name: 'transport' | 'era', allowed: readonly string[]) => {
    const value = options[name]
    if (value !== undefined && !allowed.includes(value as string))
      throw new TypeError(`${name} must be one of ${allowed.join(', ')}`)
  }
  oneOf('transport', ['mcp', 'rest'])
  oneOf('era', ['auto', MODERN_VERSION, 'legacy'])
  if (options.allowPrivate !== undefined && typeof options.allowPrivate !== 'boolean')
    throw new TypeError('allowPrivate must be a boolean')
  if (options.now !== undefined && typeof options.now !== 'function') throw new TypeError('now must be a function')
  if (options.eraCache !== undefined && !(options.eraCache instanceof Map))
    throw new TypeError('eraCache must be a Map')
  if (options.edgeHeaders !== undefined && (typeof options.edgeHeaders !== 'object' || options.edgeHeaders === null))
    throw new TypeError('edgeHeaders must be an object')
  if (options.bearerToken !== undefined && typeof options.bearerToken !== 'string')
    throw new TypeError('bearerToken must be a string')
  const ca = options.ca
  if (
    ca !== undefined &&
    !(typeof ca === 'string' ? ca !== '' : Array.isArray(ca) && ca.length > 0 && ca.every((c) => typeof c === 'string'))
  )
    throw new TypeError('ca must be a PEM string or a non-empty array of them')
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new TypeError('signal must be an AbortSignal')
}

/** A request's timeout: timeoutMs, cut to what is left before the deadline (RequestTimedOut when nothing is). */
function timeoutWithin(timeoutMs: number, deadline: number | undefined): number {
  if (deadline === undefined) return timeoutMs
  const left = deadline - Date.now()
  if (left <= 0) throw new RequestTimedOut(0)
  return Math.min(timeoutMs, left)
}

/**
 * How long an answer asked the platform to wait before the same call again, when it is one the platform retries on
 * its word: a retryable 409 in_progress, 429 or 503 envelope, or an HTTP 429/503 refusal, carrying Retry-After.
 * undefined for everything else — a refusal that is not retryable is never retried, whatever header it carries.
 */
function retryLater(answer: ToolOutcome | PlatformClientError): number | undefined {
  if (answer instanceof UnexpectedHttpStatus)
    return answer.status === 429 || answer.status === 503 ? answer.retryAfterMs : undefined
  if (answer instanceof PlatformClientError || answer.kind !== 'error' || !answer.retryable) return undefined
  const asked =
    (answer.status === 409 && answer.code === 'in_progress') || answer.status === 429 || answer.status === 503
  return asked ? answer.retryAfterMs : undefined
}

interface Session {
  era: Era
  sessionId: string | undefined
  protocolVersion: string | undefined
}

const CLIENT_INFO = { name: 'tollgate-platform-client', version: '0.1.0' }

// The 2026-07-28 per-request envelope; the platform declares no capabilities ({}).
function modernMeta(): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
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

function readToolResult(result: JsonObject, outputRef: string, era: Era, requestId: string): ToolOutcome {
  if (result.resultType !== undefined && result.resultType !== 'complete') throw new ResultNotComplete()
  const isError = result.isError
  if (isError !== undefined && typeof isError !== 'boolean') throw new MalformedBody('isError is not a boolean')
  const structured = result.structuredContent
  if (!isObject(structured)) throw new InvalidResult('no structuredContent object')
  const value = plain(structured, true)
  if (isError === true) {
    const verdict = contractValidator(ERROR_ENVELOPE_REF)(value)
    if (!verdict.valid) throw new InvalidResult(verdict.errors)
    const error = (value as { error: { code: string; message: string; retryable: boolean } }).error
    return {
      kind: 'error',
      status: errorHttpStatus(error.code),
      code: error.code,
      retryable: error.retryable,
      message: error.message,
      value,
      era,
      requestId,
    }
  }
  const verdict = contractValidator(outputRef)(value)
  if (!verdict.valid) throw new InvalidResult(verdict.errors)
  return { kind: 'result', status: 200, value, era, requestId }
}
