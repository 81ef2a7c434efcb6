// The one MCP endpoint: admission over raw bytes, then routing by era — 2026-07-28 requests to the SDK's stateless
// handler (fed the same bytes), 2025-era sessions to LegacySessions. Every answer before the SDK is ours.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { NodeMcpRequestHandler } from '@modelcontextprotocol/node'
import { CREDENTIALS_REJECTED_BODY } from '@tollgate/signing'
import { parsePlain, readStreamBounded, StrictJsonError } from '@tollgate/strict-json'
import type { Logger } from 'pino'
import type { AdmissionResult } from './authorize.js'
import { jsonRpcError, type LegacySessions } from './legacy-sessions.js'

// The 2025-era revisions; any other MCP-Protocol-Version value is a modern claim the SDK's modern leg judges.
const LEGACY_VERSIONS = new Set(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'])
const VERSION_META = 'io.modelcontextprotocol/protocolVersion'

export interface HandlerOptions {
  path: string
  maxBodyBytes: number
  admit: (method: string, headers: IncomingMessage['headers'], rawPath: string, body: Uint8Array) => AdmissionResult
  modern: NodeMcpRequestHandler
  /** Answers a well-formed modern tools/call itself (SDK-identical); false hands the request to `modern`. */
  fastPath?: (req: IncomingMessage, raw: Buffer, res: ServerResponse) => Promise<boolean>
  legacy: LegacySessions
  logger: Logger | undefined
}

function envelope(res: ServerResponse, status: number, body: string, extra: Record<string, string> = {}) {
  res
    .writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...extra })
    .end(body)
}

const errorBody = (code: string, message: string) => JSON.stringify({ error: { code, message, retryable: false } })

/** A request-like object that replays the verified bytes to the SDK (a fresh iterator per use). */
function replayOf(req: IncomingMessage, raw: Buffer) {
  return {
    method: req.method,
    url: req.url,
    headers: req.headers,
    async *[Symbol.asyncIterator]() {
      if (raw.length > 0) yield raw
    },
  }
}

function isModern(req: IncomingMessage, body: unknown): boolean {
  const header = req.headers['mcp-protocol-version']
  if (typeof header === 'string' && !LEGACY_VERSIONS.has(header)) return true
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false
  const params = (body as { params?: unknown }).params
  if (params === null || typeof params !== 'object') return false
  const meta = (params as { _meta?: unknown })._meta
  return meta !== null && typeof meta === 'object' && Object.hasOwn(meta, VERSION_META)
}

export function createHandler(options: HandlerOptions) {
  const { logger } = options
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const rawPath = q === -1 ? url : url.slice(0, q)
    if (rawPath !== options.path) {
      req.resume()
      envelope(res, 404, errorBody('not_found', 'no such endpoint'))
      return
    }
    let raw: Buffer
    try {
      raw = await readStreamBounded(req, options.maxBodyBytes)
    } catch (error) {
      if (error instanceof StrictJsonError) {
        envelope(res, 413, errorBody('invalid_request', 'the request body is too large'), { connection: 'close' })
      } else {
        res.destroy()
      }
      return
    }
    const method = req.method ?? 'GET'
    const admitted = options.admit(method, req.headers, rawPath, raw)
    if (!admitted.ok) {
      // reason is for metrics only; the caller gets the same fixed body whatever failed.
      logger?.warn({ http_method: method, reason: admitted.reason }, 'request rejected: credentials')
      envelope(res, 401, CREDENTIALS_REJECTED_BODY)
      return
    }
    const sessionId = req.headers['mcp-session-id']
    if (method === 'DELETE') {
      if (typeof sessionId !== 'string') {
        jsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required')
        return
      }
      await options.legacy.handle(sessionId, req, res, undefined)
      return
    }
    if (method !== 'POST') {
      // No standalone GET stream: the platform never opens one, and 405 is allowed in both eras.
      res.setHeader('allow', 'POST, DELETE')
      jsonRpcError(res, 405, -32000, 'Method not allowed.')
      return
    }
    const version = req.headers['mcp-protocol-version']
    if (typeof version === 'string' && !LEGACY_VERSIONS.has(version)) {
      // A modern claim: the SDK's modern leg parses and judges it (headers, envelope, version). A stray
      // Mcp-Session-Id is ignored, as 2026-07-28 requires.
      if (options.fastPath !== undefined && (await options.fastPath(req, raw, res))) return
      await options.modern(replayOf(req, raw), res)
      return
    }
    let body: unknown
    try {
      body = parsePlain(raw, { maxBytes: options.maxBodyBytes, maxDepth: 64 })
    } catch {
      jsonRpcError(res, 400, -32700, 'Parse error')
      return
    }
    if (isModern(req, body)) {
      await options.modern(replayOf(req, raw), res)
      return
    }
    if (typeof sessionId === 'string') {
      await options.legacy.handle(sessionId, req, res, body)
      return
    }
    const m = body !== null && typeof body === 'object' ? (body as { method?: unknown }).method : undefined
    if (m === 'initialize') {
      await options.legacy.initialize(req, res, body)
      return
    }
    jsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required')
  }
}
