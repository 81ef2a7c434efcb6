// The REST binding of merchant-provider/v1: the same tool table, rules, store and billing port as /mcp; only the
// shape of requests and answers differs. Order of handling (rest-binding.md §1): 413 → 401 (before any routing, so
// an unsigned caller learns nothing) → 404/405 → strict body and schema (400) → the rules.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { contractValidator, errorHttpStatus, isWireErrorCode } from '@tollgate/contract'
import { BODY_REFUSAL_MESSAGES, type BodyReader, type BodyRefusal } from '@tollgate/mcp-endpoint'
import { CREDENTIALS_REJECTED_BODY } from '@tollgate/signing'
import { parsePlain, StrictJsonError } from '@tollgate/strict-json'
import type { ProviderAdmission } from '../http/authorize.js'
import { answerTool, type ServerContext } from '../mcp/create-server.js'
import { bodyRefusalReason } from '../metrics.js'
import type { ToolAnswer } from '../rules/answers.js'
import { RETRY_AFTER_SECONDS } from '../store/outage.js'
import { createRestRouter, type RestRoute, type RouteMatch } from './routes.js'

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key'

/** REST correlation headers → the `_meta` keys the MCP binding logs (rest-binding.md §5; not signed). */
export const CORRELATION_HEADERS: Readonly<Record<string, string>> = {
  'x-supportroute-request-id': 'dev.supportroute/request_id',
  'x-supportroute-correlation-id': 'dev.supportroute/correlation_id',
  'x-supportroute-channel': 'dev.supportroute/channel',
  'x-supportroute-external-ticket': 'dev.supportroute/external_ticket',
}

// Our choice (rest-binding.md §2): 1–255 printable ASCII characters.
const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/

export interface RestHandlerOptions {
  ctx: ServerContext
  /** The server's one body reader (byte cap, deadline, unfinished-body cap), shared with the MCP endpoint. */
  bodies: BodyReader
  /** Bearer token and edge headers (before the body is read), then the signature with the key field. */
  admission: ProviderAdmission
}

const JSON_TYPE = 'application/json'

function send(res: ServerResponse, status: number, body: string, extra: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body), ...extra }).end(body)
}

const envelope = (code: string, message: string) => JSON.stringify({ error: { code, message, retryable: false } })

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false
  const type = value.split(';', 1)[0]?.trim().toLowerCase()
  return type === JSON_TYPE
}

function correlationMeta(headers: IncomingMessage['headers']): Record<string, unknown> {
  const meta: Record<string, unknown> = {}
  for (const [header, key] of Object.entries(CORRELATION_HEADERS)) {
    const v = headers[header]
    if (typeof v === 'string') meta[key] = v
  }
  return meta
}

/** A step's answer when it has already refused the request (no allocation: one shared marker). */
const REFUSED: unique symbol = Symbol('refused')

type Refuse = (
  res: ServerResponse,
  method: string,
  status: number,
  message: string,
  extra?: Record<string, string>,
) => void

export function createRestHandler(options: RestHandlerOptions) {
  const { ctx, bodies, admission } = options
  const maxBodyBytes = bodies.maxBodyBytes
  const { logger } = ctx
  const route = createRestRouter(ctx.tools)
  const outputChecks = new Map(ctx.tools.map((t) => [t.tool.name, contractValidator(t.tool.outputRef)]))

  const refuse: Refuse = (res, method, status, message, extra = {}) => {
    logger?.info({ binding: 'rest', http_method: method, status }, 'request refused')
    ctx.metrics?.refused('rest', status === 405 ? 'method_not_allowed' : 'bad_request')
    send(res, status, envelope('invalid_request', message), extra)
  }
  const rejected = (req: IncomingMessage, res: ServerResponse, method: string, reason: string, unread: boolean) => {
    // reason is for metrics only; the caller gets the same fixed body whatever failed.
    logger?.warn({ binding: 'rest', http_method: method, reason }, 'request rejected: credentials')
    ctx.metrics?.refused('rest', unread ? 'credentials' : 'signature')
    send(res, 401, CREDENTIALS_REJECTED_BODY, unread && !req.readableEnded ? { connection: 'close' } : {})
  }
  const refuseUnread = (res: ServerResponse, method: string, read: BodyRefusal) => {
    // As at the MCP door: 503 is unavailable; 408 (too slow) is worth retrying; 413 and 400 (cut off) are not.
    const code = read.status === 503 ? 'unavailable' : 'invalid_request'
    const retryable = read.status === 503 || read.status === 408
    logger?.info({ binding: 'rest', http_method: method, status: read.status }, 'request refused')
    ctx.metrics?.refused('rest', bodyRefusalReason(read.code))
    const body = JSON.stringify({ error: { code, message: BODY_REFUSAL_MESSAGES[read.code], retryable } })
    send(res, read.status, body, { connection: 'close' })
  }
  const refuseRoute = (res: ServerResponse, method: string, match: Exclude<RouteMatch, { kind: 'found' }>) => {
    if (match.kind === 'not_found') {
      logger?.info({ binding: 'rest', http_method: method, status: 404 }, 'request refused')
      ctx.metrics?.refused('rest', 'no_route')
      send(res, 404, JSON.stringify({ error: { code: 'not_found', message: 'no such route', retryable: false } }))
    } else if (match.kind === 'method_not_allowed')
      refuse(res, method, 405, `this route answers ${match.allow.join(', ')} only`, { allow: match.allow.join(', ') })
    else refuse(res, method, 400, 'the path is not validly percent-encoded')
  }

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const rawPath = q === -1 ? url : url.slice(0, q)
    const method = req.method ?? 'GET'
    // Token and edge headers need no body: checked first, as at the MCP door (an unread body closes the connection).
    const byHeaders = admission.admitHeaders(req)
    if (!byHeaders.ok) return rejected(req, res, method, byHeaders.reason, true)
    // 413 (and 408/503 from the reader's other limits) before the signature: a body that is not read cannot be verified.
    const read = await bodies.read(req)
    if (!read.ok) return refuseUnread(res, method, read)
    const raw = read.body
    const keyHeader = req.headers['idempotency-key']
    const signed = admission.admitBody({
      method,
      rawPath,
      headers: req.headers,
      body: raw,
      key: typeof keyHeader === 'string' ? keyHeader : '',
    })
    if (!signed.ok) return rejected(req, res, method, signed.reason, false)
    const match = route(method, rawPath)
    if (match.kind !== 'found') return refuseRoute(res, method, match)
    const { route: r, entry, params } = match
    const body = requestBody(req, res, method, r, raw, maxBodyBytes, refuse)
    if (body === REFUSED) return
    const key = r.keyed ? idempotencyKey(req, res, method, body, keyHeader, refuse) : undefined
    if (key === REFUSED) return
    const answer = await answerTool(ctx, entry, r.args({ params, body, key }), correlationMeta(req.headers))
    const [status, text, fault] = restAnswer(answer, outputChecks.get(entry.tool.name))
    if (fault !== undefined) logger?.error({ binding: 'rest', tool: entry.tool.name, fault }, 'answer withheld')
    // An outage (503 unavailable) and a key still held by another call (409 in_progress) say when to come back, so
    // HTTP clients and proxies can wait without reading MCP or the envelope.
    const retryAfter = retryAfterOf(answer, status)
    send(res, status, text, retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) })
  }
}

/** The request's document: none for a GET (whose body must be empty), else a strict JSON object. */
function requestBody(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  route: RestRoute,
  raw: Buffer,
  maxBodyBytes: number,
  refuse: Refuse,
): unknown {
  if (route.method === 'GET') {
    if (raw.length === 0) return undefined
    refuse(res, method, 400, 'a GET request has no body')
    return REFUSED
  }
  if (!isJsonContentType(req.headers['content-type'])) {
    refuse(res, method, 400, 'the body must be sent as Content-Type: application/json')
    return REFUSED
  }
  let body: unknown
  try {
    // integersOnly: every number in the request documents is an integer, so 2000.0 is refused, not rounded.
    body = parsePlain(raw, { maxBytes: maxBodyBytes, maxDepth: 64, integersOnly: true })
  } catch (error) {
    // The strict reader's messages are fixed per code (plus a byte offset): they never quote the input.
    const why = error instanceof StrictJsonError ? error.message : 'it could not be read'
    refuse(res, method, 400, `the body is not strict JSON: ${why}`)
    return REFUSED
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    refuse(res, method, 400, 'the body must be a JSON object')
    return REFUSED
  }
  return body
}

/** A keyed route's Idempotency-Key: exactly one for a real call, none for a dry run, 1–255 printable ASCII. */
function idempotencyKey(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  body: unknown,
  keyHeader: string | string[] | undefined,
  refuse: Refuse,
): string | undefined | typeof REFUSED {
  const distinct = req.headersDistinct['idempotency-key']
  const dryRun = (body as { dry_run?: unknown }).dry_run === true
  if (distinct !== undefined && distinct.length > 1) {
    refuse(res, method, 400, 'send one Idempotency-Key header')
    return REFUSED
  }
  const key = typeof keyHeader === 'string' ? keyHeader : undefined
  if (dryRun && key !== undefined) {
    refuse(res, method, 400, 'a dry run carries no Idempotency-Key header')
    return REFUSED
  }
  if (!dryRun && key === undefined) {
    refuse(res, method, 400, 'a real call needs an Idempotency-Key header')
    return REFUSED
  }
  if (key !== undefined && !KEY_SHAPE.test(key)) {
    refuse(res, method, 400, 'the Idempotency-Key header must be 1-255 printable ASCII characters')
    return REFUSED
  }
  return key
}

/**
 * The answer's Retry-After in seconds: the one it names, else an outage's 2 for a 503 (a port's own unavailable
 * names none), else none.
 */
const retryAfterOf = (answer: ToolAnswer, status: number): number | undefined =>
  (!answer.ok && answer.retryAfterSeconds) || (status === 503 ? RETRY_AFTER_SECONDS.unreachable : undefined)

const INTERNAL_ERROR = JSON.stringify({
  error: { code: 'internal_error', message: 'the provider built an invalid answer', retryable: true },
})

/**
 * Status and bytes of an answer: 200 with the object, or the envelope at the status of its code (seed's table). An
 * answer the contract does not allow (an object failing the tool's output schema — the MCP binding checks it too —
 * or an error code outside the contract) is withheld: 500 internal_error, and the fault is named for the log.
 */
function restAnswer(
  answer: ToolAnswer,
  checkOutput: ((value: unknown) => { valid: boolean }) | undefined,
): [number, string, ('invalid_output' | 'unknown_error_code')?] {
  if (answer.ok) {
    if (checkOutput !== undefined && !checkOutput(answer.body).valid) return [500, INTERNAL_ERROR, 'invalid_output']
    return [200, JSON.stringify(answer.body)]
  }
  const code = answer.body.error.code
  if (!isWireErrorCode(code)) return [500, INTERNAL_ERROR, 'unknown_error_code']
  return [errorHttpStatus(code), JSON.stringify(answer.body)]
}
