// MCP: one session per attempt, one tools/call in it, closed; also what only MCP offers (discovery, tools/list).
// The correlation ids travel in `_meta` (with the 2026-07-28 envelope on a modern server).
import { randomUUID } from 'node:crypto'
import { contractValidator, errorHttpStatus } from '@tollgate/contract'
import type { JsonObject } from '@tollgate/strict-json'
import { InvalidResult, MalformedBody, ResultNotComplete, ToolListMalformed } from '../errors.js'
import { TOOL_LIST_MAX_DEPTH } from '../limits.js'
import {
  ERROR_ENVELOPE_REF,
  type Era,
  MODERN_VERSION,
  type ToolListing,
  type ToolOutcome,
  type ToolPage,
} from '../types.js'
import type { Endpoint } from './endpoint.js'
import { type EraSettings, McpSessions, modernMeta } from './mcp-sessions.js'
import { isObject, plain, resultOf } from './messages.js'
import { retryAfterMs } from './retry-after.js'
import type { ToolCall, ToolTransport } from './tool-transport.js'

/** How much of tools/list to read: at most maxPages + 1 pages, all before the deadline (epoch ms) when given. */
export interface ListingRequest {
  maxPages: number
  deadline?: number
}

export class McpTransport implements ToolTransport {
  readonly kind = 'mcp'
  readonly #endpoint: Endpoint
  readonly #sessions: McpSessions

  constructor(endpoint: Endpoint, eras: EraSettings) {
    this.#endpoint = endpoint
    this.#sessions = new McpSessions(endpoint, eras)
  }

  /** The era used for the base URL, detected with a discovery when not known yet. */
  async era(): Promise<Era> {
    const url = await this.#endpoint.url()
    return this.#sessions.knownEra(url) ?? this.discover()
  }

  /** Opens and closes one session and returns the era it used. */
  async discover(): Promise<Era> {
    const url = await this.#endpoint.url()
    const session = await this.#sessions.open(url, {})
    await this.#sessions.close(session)
    return session.era
  }

  async call({ name, outputRef, args, context, options }: ToolCall): Promise<ToolOutcome> {
    if (options.keyFieldFault !== undefined) throw new TypeError('keyFieldFault applies to the REST transport only')
    const sessions = this.#sessions
    const url = await this.#endpoint.url()
    const requestId = randomUUID()
    const meta: Record<string, unknown> = {
      'dev.supportroute/request_id': requestId,
      'dev.supportroute/correlation_id': context.correlationId,
      'dev.supportroute/channel': context.channel,
    }
    if (context.externalTicket !== undefined) meta['dev.supportroute/external_ticket'] = context.externalTicket
    const { signatureFor, deadline } = options
    const session = await sessions.open(url, { signatureFor, deadline })
    try {
      const message = {
        jsonrpc: '2.0',
        id: sessions.nextId(),
        method: 'tools/call',
        params: { name, arguments: args, _meta: session.era === MODERN_VERSION ? { ...modernMeta(), ...meta } : meta },
      }
      const headers = { 'mcp-name': name }
      const received = await sessions.post({ session, phase: 'tools/call', message, signatureFor, headers, deadline })
      const outcome = readToolResult(resultOf(received, 'tools/call'), outputRef, session.era, requestId)
      // The MCP answer travels in a 200; a provider may still say when to come back (its fast path does on 503s).
      const retryAfter = retryAfterMs(received.headers)
      return outcome.kind === 'error' && retryAfter !== undefined ? { ...outcome, retryAfterMs: retryAfter } : outcome
    } finally {
      await sessions.close(session, signatureFor)
    }
  }

  /** Lists tools in one session, following nextCursor; truncated when the server offered more than maxPages. */
  async listTools({ maxPages, deadline }: ListingRequest): Promise<ToolListing> {
    const sessions = this.#sessions
    const url = await this.#endpoint.url()
    const session = await sessions.open(url, { deadline })
    try {
      const pages: ToolPage[] = []
      let cursor: string | undefined
      do {
        const params: Record<string, unknown> = {}
        if (cursor !== undefined) params.cursor = cursor
        if (session.era === MODERN_VERSION) params._meta = modernMeta()
        const message = { jsonrpc: '2.0', id: sessions.nextId(), method: 'tools/list', params }
        const maxDepth = TOOL_LIST_MAX_DEPTH
        const received = await sessions.post({ session, phase: 'tools/list', message, deadline, maxDepth })
        const page = readToolPage(resultOf(received, 'tools/list', maxDepth))
        cursor = page.nextCursor
        pages.push(page)
      } while (cursor !== undefined && pages.length <= maxPages)
      return { era: session.era, pages, truncated: cursor !== undefined }
    } finally {
      await sessions.close(session)
    }
  }
}

function readToolPage(result: JsonObject): ToolPage {
  if (result.resultType !== undefined && result.resultType !== 'complete') throw new ResultNotComplete()
  const tools = result.tools
  if (!Array.isArray(tools)) throw new ToolListMalformed('the result has no tools array')
  const next = result.nextCursor
  if (next !== undefined && next !== null && typeof next !== 'string')
    throw new ToolListMalformed('nextCursor is not a string')
  const nextCursor = typeof next === 'string' && next !== '' ? next : undefined
  return { tools: tools.map((t) => plain(t, false)), nextCursor }
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
