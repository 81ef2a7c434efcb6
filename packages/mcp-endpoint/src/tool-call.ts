// The plain tools/call a fast path may answer itself, for either era, and how to write its answer. A fast path runs
// behind the door (the body admitted and parsed once, strictly), so it never parses: it only recognises the one
// envelope whose answer it can give exactly as the SDK would, and returns undefined for everything else, so every
// other request (another method, a header or envelope problem, progress or log-level requests, MRTR fields) and
// every error reply stays the SDK's own. Shared by the provider and the gate.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http'

/** The modern protocol revision whose stateless requests carry their own headers and `_meta`. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28'
// The 2025-era protocol versions the SDK's legacy transport accepts in MCP-Protocol-Version.
const LEGACY_VERSIONS = new Set(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'])
const PROTOCOL_META = 'io.modelcontextprotocol/protocolVersion'
const CAPS_META = 'io.modelcontextprotocol/clientCapabilities'
const PARAMS_KEYS = new Set(['name', 'arguments', '_meta'])
const TOP_KEYS = new Set(['jsonrpc', 'id', 'method', 'params'])

type Plain = Record<string, unknown>
const isObject = (v: unknown): v is Plain => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A recognised plain tools/call: its id, tool name, arguments (`{}` when absent) and `_meta` (if any). */
export interface PlainToolCall {
  /** The parsed request object itself (the same object the SDK would be given). */
  request: Plain & { method: 'tools/call'; params: Plain }
  id: string | number
  name: string
  args: Plain
  meta: Plain | undefined
}

function envelope(message: unknown): PlainToolCall | undefined {
  if (!isObject(message) || message.jsonrpc !== '2.0' || message.method !== 'tools/call') return undefined
  if (Object.keys(message).some((k) => !TOP_KEYS.has(k))) return undefined
  const id = message.id
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return undefined
  const params = message.params
  if (!isObject(params) || Object.keys(params).some((k) => !PARAMS_KEYS.has(k))) return undefined
  const name = params.name
  if (typeof name !== 'string') return undefined
  const meta = params._meta
  if (meta !== undefined && (!isObject(meta) || 'progressToken' in meta)) return undefined
  const args = params.arguments === undefined ? {} : params.arguments
  if (!isObject(args)) return undefined
  return { request: message as PlainToolCall['request'], id, name, args, meta }
}

const header = (headers: IncomingHttpHeaders, name: string) => {
  const v = headers[name]
  return typeof v === 'string' ? v : undefined
}

/**
 * A 2026-07-28 tools/call whose headers agree with its body (Mcp-Method, Mcp-Name, MCP-Protocol-Version, a JSON
 * Content-Type) and whose `_meta` names the protocol version and client capabilities; undefined otherwise.
 */
export function modernToolCall(message: unknown, headers: IncomingHttpHeaders): PlainToolCall | undefined {
  if (
    header(headers, 'mcp-method') !== 'tools/call' ||
    header(headers, 'mcp-protocol-version') !== MODERN_PROTOCOL_VERSION
  )
    return undefined
  const type = header(headers, 'content-type')
  if (type === undefined || !type.toLowerCase().startsWith('application/json')) return undefined
  const call = envelope(message)
  if (call === undefined || call.name !== header(headers, 'mcp-name')) return undefined
  const meta = call.meta
  if (meta === undefined || meta[PROTOCOL_META] !== MODERN_PROTOCOL_VERSION || !isObject(meta[CAPS_META]))
    return undefined
  // A log level asks for notifications: leave those to the SDK.
  if ('io.modelcontextprotocol/logLevel' in meta) return undefined
  return call
}

/**
 * A tools/call on a verified 2025-era session that the SDK's stateless transport would answer as one JSON body
 * (Accept names JSON and SSE, a JSON Content-Type, a known or absent MCP-Protocol-Version); undefined otherwise.
 */
export function legacyToolCall(message: unknown, headers: IncomingHttpHeaders): PlainToolCall | undefined {
  const type = header(headers, 'content-type')
  const accept = header(headers, 'accept')
  if (type === undefined || !type.toLowerCase().startsWith('application/json')) return undefined
  if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream'))
    return undefined
  const version = headers['mcp-protocol-version']
  if (version !== undefined && (typeof version !== 'string' || !LEGACY_VERSIONS.has(version))) return undefined
  return envelope(message)
}

/**
 * Writes a 200 JSON-RPC success answer. `result` is the result's JSON with its closing brace left off (so a
 * modern answer's `resultType` and `_meta` can follow without serialising the result again); `tail` is what
 * follows inside the result object (e.g. `,"resultType":"complete"`) and may be empty. Written as parts, never
 * copied into one buffer.
 */
export function writeToolResult(res: ServerResponse, id: string | number, result: Buffer, tail: string): void {
  const head = '{"result":'
  const end = `${tail}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': head.length + result.length + Buffer.byteLength(end),
  })
  res.cork()
  res.write(head)
  res.write(result)
  res.end(end)
}

/**
 * What the SDK's 2026-07-28 encoder adds inside every tools/call result (the 2025-era one adds nothing): the `tail`
 * for {@link writeToolResult}.
 */
export function modernResultTail(serverInfo: { name: string; version: string }): string {
  return `,"resultType":"complete","_meta":${JSON.stringify({ 'io.modelcontextprotocol/serverInfo': serverInfo })}`
}

/** A result object's JSON without its closing brace, for {@link writeToolResult}. */
export function openResultJson(result: object): Buffer {
  const json = JSON.stringify(result)
  return Buffer.from(json.slice(0, -1))
}
