// The one door of an MCP server: Host/Origin guard, admission on headers, the raw body read once under limits,
// admission on the exact bytes, ONE strict parse, routing by era with the SDK's own classifier, then the modern
// handler (given the parsed message, so the SDK never parses again) or the 2025-era sessions. A body the strict
// reader refuses is answered here and reaches nothing else.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { NodeMcpRequestHandler } from '@modelcontextprotocol/node'
import type { AuthInfo } from '@modelcontextprotocol/server'
import { parsePlain } from '@tollgate/strict-json'
import { BODY_REFUSAL_MESSAGES, type BodyLimits, BodyReader, type BodyRefusal } from './body.js'
import { EndpointConfigError } from './errors.js'
import { type HostAllowList, hostGuard, loopbackAllowList } from './host-allow-list.js'
import { jsonRpcError, send } from './internal/answers.js'
import { EraClassifier, header } from './internal/era-classifier.js'
import { isPlainLegacy } from './internal/plain-legacy.js'
import type { Caller, LegacySessions } from './legacy-sessions.js'
import { modernToolCall, type PlainToolCall } from './tool-call.js'
import { type AroundToolCall, Exchange, holdsToolCall, type ToolCallExchange } from './tool-call-hook.js'

export { MODERN_META_VERDICTS } from './internal/era-classifier.js'

/** An admitted caller, or the exact refusal to send (fixed texts only; `reason` is for logs). */
export type Admission =
  | { ok: true; caller: string; authInfo?: AuthInfo }
  | { ok: false; status: number; headers?: Record<string, string>; body: string; reason: string }

/** What admission sees after the body: the exact bytes as received, and the path before any query. */
export interface AdmissionRequest {
  method: string
  rawPath: string
  headers: IncomingHttpHeaders
  body: Buffer
}

/** A request the door has admitted and parsed once: handed to a fast path. */
export interface AdmittedMessage {
  req: IncomingMessage
  /** The verified bytes, exactly as received. */
  raw: Buffer
  /** The one parse of `raw` (strict: no duplicate names, bounded depth; integers only when configured). */
  message: unknown
  /** `message` as a plain 2026-07-28 tools/call (modernToolCall, recognised once by the door), else undefined. */
  plainCall: PlainToolCall | undefined
  caller: Caller
}

/** Events worth logging; never carries a header value, token or body byte. */
export type EndpointEvent =
  | { kind: 'refused-host'; status: 421 | 403 }
  | { kind: 'refused-admission'; reason: string; stage: 'headers' | 'body' }
  | { kind: 'refused-body'; code: BodyRefusal['code'] }
  | { kind: 'refused-json'; code: string }
  | { kind: 'fast-path'; answered: boolean }

export interface EndpointOptions {
  /** The MCP path, e.g. '/mcp'. */
  path: string
  /** Host/Origin allow-list (DNS rebinding); default loopback only. false disables the guard (tests, behind a proxy that checks). */
  allowList?: HostAllowList | false
  /** Body limits, or a BodyReader shared with other routes of the same server. */
  body?: BodyLimits | BodyReader
  /** The strict parse: nesting limit (default 64) and whether numbers must be integers (no 2000.0, no 2e3). */
  json?: { maxDepth?: number; integersOnly?: boolean }
  /** Admission on headers alone, before any body byte is read (a bearer token, an edge secret). */
  admitHeaders?: (req: IncomingMessage) => Admission | Promise<Admission>
  /** Admission over the exact raw bytes (an HMAC signature). Runs after admitHeaders; its caller wins. */
  admitBody?: (request: AdmissionRequest, before: Caller | undefined) => Admission | Promise<Admission>
  /** The SDK's modern (2026-07-28) handler, e.g. toNodeHandler(createMcpHandler(..., { legacy: 'reject' })). */
  modern: NodeMcpRequestHandler
  /** Answers a modern request itself and returns true, or returns false untouched (the SDK then answers). */
  fastPath?: (message: AdmittedMessage, res: ServerResponse) => Promise<boolean>
  /** The 2025-era leg (which takes its own `aroundToolCall`). */
  legacy: LegacySessions
  /** Runs around every modern POST holding a tools/call, fast path or SDK (see {@link AroundToolCall}). */
  aroundToolCall?: AroundToolCall
  /**
   * A refusal before any JSON-RPC exchange exists (404, 401, 413, 408, 503): the body to send. Default: a JSON-RPC
   * error body. A server whose platform reads its own envelope passes that format.
   */
  refusalBody?: (status: number, code: string, message: string) => string
  onEvent?: (event: EndpointEvent) => void
}

export interface McpEndpoint {
  /** Serves the MCP path; any other path goes to `other` (default 404). */
  handle(req: IncomingMessage, res: ServerResponse, other?: OtherRoute): Promise<void>
  /** The reader every route of this server shares. */
  readonly bodyReader: BodyReader
  /** How many modern requests the fast path answered (a diagnostic tests and benches can read). */
  readonly fastPathAnswered: number
  /** How many POSTed messages the SDK's era classifier was run on (a diagnostic: repeats skip it, see `classify`). */
  readonly sdkClassified: number
  readonly path: string
}

/** A handler for non-MCP paths on the same port (e.g. REST routes); it gets the path without the query. */
export type OtherRoute = (req: IncomingMessage, res: ServerResponse, rawPath: string) => Promise<void>

const callerOf = (verdict: Extract<Admission, { ok: true }>): Caller =>
  verdict.authInfo === undefined ? { caller: verdict.caller } : { caller: verdict.caller, authInfo: verdict.authInfo }

const defaultRefusal = (_status: number, _code: string, message: string) =>
  JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null })

export function createMcpEndpoint(options: EndpointOptions): McpEndpoint {
  if (!options.path.startsWith('/')) throw new EndpointConfigError("path must start with '/'")
  const guard = options.allowList === false ? undefined : hostGuard(options.allowList ?? loopbackAllowList())
  const reader = options.body instanceof BodyReader ? options.body : new BodyReader(options.body)
  const maxDepth = options.json?.maxDepth ?? 64
  const integersOnly = options.json?.integersOnly === true
  const refusalBody = options.refusalBody ?? defaultRefusal
  const emit = options.onEvent ?? (() => {})
  const aroundToolCall = options.aroundToolCall
  const classifier = new EraClassifier()
  const { serveModern, serveBySdk, answered } = modernLeg(options, emit)
  const refuseAdmission = (
    req: IncomingMessage,
    res: ServerResponse,
    verdict: Extract<Admission, { ok: false }>,
    stage: 'headers' | 'body',
  ) => refuseAdmissionWith(emit, req, res, verdict, stage)

  const refuse = (
    res: ServerResponse,
    status: number,
    code: string,
    message: string,
    extra: Record<string, string> = {},
  ) => send(res, status, { 'content-type': 'application/json', ...extra }, refusalBody(status, code, message))

  async function handle(req: IncomingMessage, res: ServerResponse, other?: OtherRoute): Promise<void> {
    if (guard !== undefined) {
      const origin = req.headers.origin
      const verdict = guard({ host: req.headers.host, origin: Array.isArray(origin) ? origin[0] : origin })
      if (!verdict.ok) {
        emit({ kind: 'refused-host', status: verdict.status })
        req.resume()
        return send(res, verdict.status, { 'content-type': 'text/plain; charset=utf-8' }, verdict.body)
      }
    }
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const rawPath = q === -1 ? url : url.slice(0, q)
    if (rawPath !== options.path) {
      if (other !== undefined) return other(req, res, rawPath)
      req.resume()
      return refuse(res, 404, 'not_found', 'no such endpoint')
    }
    const method = req.method ?? 'GET'
    let caller: Caller | undefined
    if (options.admitHeaders !== undefined) {
      const verdict = await options.admitHeaders(req)
      if (!verdict.ok) return refuseAdmission(req, res, verdict, 'headers')
      caller = callerOf(verdict)
    }
    const read = await reader.read(req)
    if (!read.ok) {
      emit({ kind: 'refused-body', code: read.code })
      return refuse(res, read.status, read.code, BODY_REFUSAL_MESSAGES[read.code], { connection: 'close' })
    }
    const raw = read.body
    if (options.admitBody !== undefined) {
      const verdict = await options.admitBody({ method, rawPath, headers: req.headers, body: raw }, caller)
      if (!verdict.ok) return refuseAdmission(req, res, verdict, 'body')
      caller = callerOf(verdict)
    }
    const who: Caller = caller ?? { caller: '' }
    if (method !== 'POST') return options.legacy.handle(req, res, undefined, who)

    // The one parse. Whatever it refuses is answered here: nothing after this line ever sees those bytes.
    let message: unknown
    try {
      message = parsePlain(raw, { maxBytes: reader.maxBodyBytes, maxDepth, integersOnly })
    } catch (error) {
      emit({ kind: 'refused-json', code: (error as { code?: string }).code ?? 'unknown' })
      return jsonRpcError(res, 400, -32700, 'Parse error')
    }
    // Plainly 2025-era messages skip the classifier's costly failed response parses (see isPlainLegacy).
    if (isPlainLegacy(message, header(req, 'mcp-protocol-version')))
      return options.legacy.handle(req, res, message, who)
    const plainCall = options.fastPath === undefined ? undefined : modernToolCall(message, req.headers)
    const era = classifier.classify(message, req, plainCall)
    if (era === 'legacy') return options.legacy.handle(req, res, message, who)
    if (who.authInfo !== undefined) (req as IncomingMessage & { auth?: AuthInfo }).auth = who.authInfo
    const exchange = new Exchange('modern', req, res, message, who, raw, plainCall)
    if (aroundToolCall !== undefined && (plainCall !== undefined || holdsToolCall(message)))
      return aroundToolCall(exchange, era === 'modern' ? serveModern : serveBySdk)
    return era === 'modern' ? serveModern(exchange) : serveBySdk(exchange)
  }

  return {
    handle,
    bodyReader: reader,
    get fastPathAnswered() {
      return answered.fast
    },
    get sdkClassified() {
      return classifier.sdkClassified
    },
    path: options.path,
  }
}

/** The modern leg: a fast path first, when there is one, else the SDK. */
function modernLeg(options: EndpointOptions, emit: (event: EndpointEvent) => void) {
  const answered = { fast: 0 }
  const aroundToolCall = options.aroundToolCall

  async function serveModern(exchange: ToolCallExchange): Promise<void> {
    if (options.fastPath !== undefined) {
      const done = await options.fastPath(exchange as Exchange, exchange.res)
      emit({ kind: 'fast-path', answered: done })
      if (done) {
        answered.fast++
        return
      }
    }
    return serveBySdk(exchange)
  }

  // Modern requests and the modern leg's own rejections: the SDK answers, from the parsed message.
  function serveBySdk(exchange: ToolCallExchange): Promise<void> {
    const { req, message } = exchange as Exchange
    // Only a hooked exchange may have its answer's head replaced; every other answer is written to `res` itself.
    const res = aroundToolCall === undefined ? exchange.res : (exchange as Exchange).sdkResponse()
    // exactOptionalPropertyTypes: node's IncomingMessage and the SDK's NodeIncomingMessageLike differ only in `?:` vs `| undefined`.
    return options.modern(req as Parameters<typeof options.modern>[0], res, message === undefined ? null : message)
  }
  return { serveModern, serveBySdk, answered }
}

function refuseAdmissionWith(
  emit: (event: EndpointEvent) => void,
  req: IncomingMessage,
  res: ServerResponse,
  verdict: Extract<Admission, { ok: false }>,
  stage: 'headers' | 'body',
): void {
  emit({ kind: 'refused-admission', reason: verdict.reason, stage })
  // An unread body is not drained: the connection closes with the answer.
  const extra: Record<string, string> = stage === 'headers' && !req.readableEnded ? { connection: 'close' } : {}
  send(res, verdict.status, { 'content-type': 'application/json', ...extra, ...verdict.headers }, verdict.body)
}
