import type { IncomingMessage, ServerResponse } from 'node:http'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { type AuthInfo, createMcpHandler } from '@modelcontextprotocol/server'
import {
  type Admission,
  createMcpEndpoint,
  type EndpointEvent,
  LegacySessions,
  type SessionStore,
} from '@tollgate/mcp-endpoint'
import type { Audience } from './audience.js'
import type { Budget } from './budget/fair-budget.js'
import { CallerQueueFull, GateError, TokenRefused } from './errors.js'
import type { CallScheduler } from './fair-scheduler.js'
import type { HostAllowList } from './host-allow-list.js'
import { createFastCalls, SETTLED_ANSWER_BYTES } from './internal/fast-calls.js'
import { buildGateServer, callScope, type FaultReporter, scopeOf } from './internal/gate-server.js'
import { bearerChallenge, protectedResourceMetadata, resourceIdentity, UNAUTHORIZED_BODY } from './resource-metadata.js'
import { BUDGET_UNAVAILABLE_RETRY_AFTER_SECONDS, type CallReport, type GatedTool, toolTable } from './tools.js'

/** One event worth logging. Carries codes and tool names from the server's own table, never request values. */
export type GateEvent =
  | { kind: 'refused-token'; code: string; libraryError: string | undefined }
  | { kind: 'refused-host'; status: 421 | 403 }
  | { kind: 'refused-queue-full'; caller: string; limit: number }
  | { kind: 'fault'; code: string; tool?: string; error?: unknown }
  | ({ kind: 'call' } & CallReport)

/** Options of {@link createGate}. */
export interface GateOptions {
  serverInfo: { name: string; version: string }
  instructions?: string
  tools: readonly GatedTool[]
  audience: Audience
  /** Authorization servers named in the metadata; default `[audience.issuer]`. */
  authorizationServers?: readonly string[]
  /**
   * Scopes a client should ask the authorization server for, advertised as the metadata's `scopes_supported` and
   * the 401 challenge's `scope` (what an MCP client's scope selection reads); default none, and then both are
   * exactly as without this option. The same for every caller: never derived from a token, so it cannot tell a caller
   * what it lacks; but every listed scope is public, so list only scopes whose existence may be known.
   */
  advertisedScopes?: readonly string[]
  /** Charged once, first, on every tools/call. */
  budget: Budget
  /** DNS-rebinding allow-list; required, because an unconfigured guard would fail open. */
  allowList: HostAllowList
  /** Log hook. */
  onEvent?: (event: GateEvent) => void
  /** Largest request body accepted, bytes; default 1 MiB (larger gets 413). */
  maxBodyBytes?: number
  /** Orders tools/call requests by caller (fairness in time); default none: every call runs at once. */
  scheduler?: CallScheduler
  /** 2025-era sessions idle longer than this are closed; default 15 minutes. */
  sessionIdleMs?: number
  /** At most this many open 2025-era sessions; default 1000. */
  maxSessions?: number
  /** At most this many 2025-era sessions per caller (the oldest is closed); default 16. */
  maxSessionsPerCaller?: number
  /** Where open 2025-era sessions are recorded: a {@link RedisSessionStore} for several replicas; default memory. */
  sessionStore?: SessionStore
  /** MAC key of session ids (≥ 32 bytes), the same on every replica; default random per process. */
  sessionKey?: string | Uint8Array
  /** The whole request body must arrive within this many ms (else 408); default 30 000. */
  bodyTimeoutMs?: number
  /** At most this many request bodies being received at once (else 503); default 256. */
  maxUnfinishedBodies?: number
  /**
   * Serve plain tools/call requests (both eras) without a per-request SDK server, serialising each result once;
   * default true. false sends every request through the SDK (what the fast path must always agree with).
   */
  fastCalls?: boolean
  /** Cap of the kept serialised results of settled answers (GatedToolAnswer.settled), bytes; default 32 MiB. */
  settledAnswerBytes?: number
}

/** The gate as a node:http request listener, plus the addresses it derived. */
export interface Gate {
  /** Handles one request: Host/Origin guard, metadata, bearer audience, then MCP (both eras) on the resource path. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>
  readonly endpointPath: string
  readonly metadataPath: string
  readonly metadataUrl: string
  /** The fast path's counters (tests and benches read them); undefined when `fastCalls` is false. */
  readonly fastCalls: { readonly answered: number; readonly fromSettledBytes: number } | undefined
  close(): Promise<void>
}

/**
 * Creates the remote-MCP gate, behind which both protocol eras are served on one path: 2026-07-28 requests by the
 * SDK v2 `createMcpHandler` (a fresh server per request, stateless), 2025-era requests by a sessionful leg
 * (`Mcp-Session-Id`, JSON answers, sessions bound to the caller that opened them). In front of both: the
 * Host/Origin allow-list (421/403), the unauthenticated RFC 9728 metadata document, and the bearer audience
 * check (every refusal one 401 with a `Bearer` challenge naming the metadata). Scope is never enforced here.
 */
export function createGate(options: GateOptions): Gate {
  const identity = resourceIdentity(options.audience.resource)
  const metadata = JSON.stringify(
    protectedResourceMetadata(
      identity.resource,
      options.authorizationServers ?? [options.audience.issuer],
      options.advertisedScopes,
    ),
  )
  const challenge = bearerChallenge(identity, options.advertisedScopes)
  const table = toolTable(options.tools)
  const emit = options.onEvent ?? (() => {})
  const onFault: FaultReporter = (code, tool, error) =>
    emit({ kind: 'fault', code, ...(tool === undefined ? {} : { tool }), error })
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576
  const build = () =>
    buildGateServer({
      serverInfo: options.serverInfo,
      instructions: options.instructions,
      table,
      budget: options.budget,
      onFault,
      onCall: (report) => emit({ kind: 'call', ...report }),
    })
  // legacy 'reject': 2025-era traffic never reaches this handler; the sessionful leg below owns it.
  const mcp = createMcpHandler(build, {
    legacy: 'reject',
    onerror: (error) => emit({ kind: 'fault', code: 'sdk', error }),
  })
  const sdkModern = toNodeHandler(mcp, {
    maxRequestBodySize: maxBodyBytes,
    onerror: (error) => emit({ kind: 'fault', code: 'adapter', error }),
  })
  // The one scheduling point: a tool call waits for its caller's turn (both eras); everything else is served at
  // once. The caller is the admitted token's sub, set by the endpoint before either leg runs.
  // A caller whose queue is full is answered 429 at once, before any charge (see refuseQueueFull).
  const scheduler = options.scheduler
  const inTurn = (caller: string, res: AnswerSink, message: unknown, work: () => Promise<void>) =>
    (scheduler as CallScheduler).run(caller, work).catch((error: unknown) => {
      if (!(error instanceof CallerQueueFull)) throw error
      emit({ kind: 'refused-queue-full', caller, limit: error.limit })
      refuseQueueFull(res, message, error)
    })
  const fast =
    options.fastCalls === false
      ? undefined
      : createFastCalls({
          server: build(),
          serverInfo: options.serverInfo,
          ...(scheduler !== undefined ? { inTurn } : {}),
          settledAnswerBytes: options.settledAnswerBytes ?? SETTLED_ANSWER_BYTES,
        })
  const legacy = new LegacySessions({
    createServer: () => build(),
    ...(fast !== undefined ? { fastPath: fast.legacy } : {}),
    idleMs: options.sessionIdleMs ?? 15 * 60_000,
    maxSessionsPerCaller: options.maxSessionsPerCaller ?? 16,
    ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
    ...(options.sessionStore !== undefined ? { store: options.sessionStore } : {}),
    ...(options.sessionKey !== undefined ? { sessionKey: options.sessionKey } : {}),
    onError: (error) => emit({ kind: 'fault', code: 'legacy-transport', error }),
  })

  const modern: typeof sdkModern = (req, res, message) => {
    const caller = (req as IncomingMessage & { auth?: AuthInfo }).auth?.clientId
    // Only a tools/call is charged: anything else goes to the SDK as it is, with no scope to carry.
    if (!isToolCall(message)) return sdkModern(req, res, message)
    const viaSdk = () => sdkLeg(res as ServerResponse, () => sdkModern(req, res, message))
    return scheduler !== undefined && caller !== undefined ? inTurn(caller, res, message, viaSdk) : viaSdk()
  }
  const handleLegacy = legacy.handle.bind(legacy)
  legacy.handle = (req, res, message, who) => {
    if (!isToolCall(message)) return handleLegacy(req, res, message, who)
    const viaLegacy = () => sdkLeg(res, () => handleLegacy(req, res, message, who))
    return scheduler !== undefined ? inTurn(who.caller, res, message, viaLegacy) : viaLegacy()
  }

  /**
   * Runs an SDK leg with its CallScope (the SDK gives its handlers no access to the response): the client's presence
   * for the charge, and the flag the charge sets when the budget store could not charge — the answer then goes out as
   * 503 with Retry-After, as the fast path answers it (Node routes an implicit header through writeHead too).
   */
  function sdkLeg<T>(res: ServerResponse, run: () => Promise<T>): Promise<T> {
    const scope = scopeOf(res)
    const writeHead = res.writeHead as (...a: unknown[]) => ServerResponse
    res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
      if (!scope.budgetUnavailable || status !== 200) return writeHead.call(this, status, ...rest)
      this.setHeader('retry-after', String(BUDGET_UNAVAILABLE_RETRY_AFTER_SECONDS))
      return writeHead.call(this, 503, ...rest)
    } as typeof res.writeHead
    return callScope.run(scope, run)
  }

  // Bearer audience on the headers alone: a caller without a valid token never gets a body byte read.
  async function admitHeaders(req: IncomingMessage): Promise<Admission> {
    try {
      const admission = await options.audience.admit(header(req, 'authorization'))
      const authInfo: AuthInfo = {
        token: admission.token,
        clientId: admission.subject,
        scopes: admission.scopes,
        expiresAt: admission.expiresAt,
        resource: new URL(admission.resource),
      }
      // Sessions are bound to the token's sub.
      return { ok: true, caller: admission.subject, authInfo }
    } catch (error) {
      if (error instanceof TokenRefused) {
        emit({ kind: 'refused-token', code: error.code, libraryError: error.libraryError })
        return {
          ok: false,
          status: 401,
          headers: { 'www-authenticate': challenge },
          body: UNAUTHORIZED_BODY,
          reason: error.code,
        }
      }
      // Keys unavailable or anything unexpected: the server's fault, never dressed up as the caller's bad token.
      emit({ kind: 'fault', code: error instanceof GateError ? error.code : 'audience', error })
      return {
        ok: false,
        status: 503,
        headers: { 'retry-after': '5' },
        body: '{"error":"temporarily_unavailable"}',
        reason: 'audience',
      }
    }
  }

  const endpoint = createMcpEndpoint({
    path: identity.endpointPath,
    allowList: options.allowList,
    body: {
      maxBodyBytes,
      ...(options.bodyTimeoutMs !== undefined ? { bodyTimeoutMs: options.bodyTimeoutMs } : {}),
      ...(options.maxUnfinishedBodies !== undefined ? { maxUnfinishedBodies: options.maxUnfinishedBodies } : {}),
    },
    admitHeaders,
    modern,
    ...(fast !== undefined ? { fastPath: fast.modern } : {}),
    legacy,
    onEvent: (event: EndpointEvent) => {
      // Body and parse refusals are the caller's and answered in full; only host refusals are gate events.
      if (event.kind === 'refused-host') emit({ kind: 'refused-host', status: event.status })
    },
  })

  // The unauthenticated RFC 9728 metadata document, and 404 for anything else; the Host/Origin guard ran first.
  async function otherPath(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    req.resume()
    if (path === identity.metadataPath) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { allow: 'GET, HEAD' }, '')
      return send(res, 200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' }, metadata)
    }
    return send(res, 404, { 'content-type': 'text/plain; charset=utf-8' }, 'Not Found')
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    await endpoint.handle(req, res, otherPath)
  }

  return {
    handle,
    endpointPath: identity.endpointPath,
    metadataPath: identity.metadataPath,
    metadataUrl: identity.metadataUrl,
    fastCalls: fast,
    async close() {
      await legacy.close()
      await mcp.close()
    },
  }
}

function isToolCall(parsed: unknown): boolean {
  const one = (m: unknown) => (m as { method?: unknown } | null)?.method === 'tools/call'
  return Array.isArray(parsed) ? parsed.some(one) : one(parsed)
}

/** Seconds a caller refused for a full queue is told to wait (HTTP's Retry-After counts whole seconds). */
const QUEUE_FULL_RETRY_AFTER_SECONDS = 1

/**
 * HTTP 429 with Retry-After, and a JSON-RPC error per request in the message (code -32000, the retry hint in
 * `data`). Both official SDK clients reject the call with the status and this body's text in the error; a client
 * fetch wrapper or proxy that honours 429 + Retry-After can retry without knowing MCP. Nothing was charged or run.
 */
function refuseQueueFull(res: AnswerSink, message: unknown, refusal: CallerQueueFull): void {
  const error = {
    code: -32000,
    message: refusal.message,
    data: { reason: 'queue-full', retryAfterSeconds: QUEUE_FULL_RETRY_AFTER_SECONDS },
  }
  const ids = (Array.isArray(message) ? message : [message])
    .map((m) => (m as { id?: unknown } | null)?.id)
    .filter((id) => typeof id === 'string' || typeof id === 'number')
  const answers = ids.map((id) => ({ jsonrpc: '2.0', id, error }))
  const body = JSON.stringify(Array.isArray(message) ? answers : (answers[0] ?? { jsonrpc: '2.0', id: null, error }))
  res.writeHead(429, {
    'content-type': 'application/json',
    'retry-after': String(QUEUE_FULL_RETRY_AFTER_SECONDS),
    'content-length': String(Buffer.byteLength(body)),
  })
  res.end(body)
}

/** What both MCP legs hand over to answer with: node's ServerResponse, or the SDK adapter's structural face of it. */
interface AnswerSink {
  writeHead(status: number, headers: Record<string, string>): unknown
  end(body: string): unknown
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}
